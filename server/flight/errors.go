package flight

import (
	"errors"
	"fmt"
	"strconv"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/loredb/lore/errs"
)

// grpcCodes is the one table from Lore's error codes to gRPC status codes (the gRPC
// counterpart of errs.Status). A code not listed is codes.Internal.
var grpcCodes = map[errs.Code]codes.Code{
	errs.Syntax:                codes.InvalidArgument,
	errs.Analysis:              codes.InvalidArgument,
	errs.InvalidSetting:        codes.InvalidArgument,
	errs.DescribeFailed:        codes.InvalidArgument,
	errs.OptimizeInvalid:       codes.InvalidArgument,
	errs.InvalidRequest:        codes.InvalidArgument,
	errs.StatisticsUnavailable: codes.FailedPrecondition,
	errs.OptimizeUnsupported:   codes.Unimplemented,
	errs.TableNotFound:         codes.NotFound,
	errs.NotFound:              codes.NotFound,
	errs.Unauthenticated:       codes.Unauthenticated,
	errs.Forbidden:             codes.PermissionDenied,
	errs.SourceChanged:         codes.Aborted,
	errs.OptimizeInProgress:    codes.Aborted,
	errs.QueryIDInUse:          codes.AlreadyExists,
	errs.RequestTooLarge:       codes.ResourceExhausted,
	errs.ResourceExhausted:     codes.ResourceExhausted,
	errs.CorruptSource:         codes.DataLoss,
	errs.Canceled:              codes.Canceled,
	errs.SourceUnavailable:     codes.Unavailable,
	errs.Internal:              codes.Internal,
}

// errorDomain names Lore in the ErrorInfo detail of a status.
const errorDomain = "lore"

// grpcCode is the gRPC code of a Lore code.
func grpcCode(c errs.Code) codes.Code {
	if g, ok := grpcCodes[c]; ok {
		return g
	}
	return codes.Internal
}

// statusError turns err into a gRPC status error: the code from grpcCodes, the
// message "CODE: message", and an ErrorInfo detail whose reason is the Lore code and
// whose metadata holds the position in the statement (when the error has one) and the
// query id (when a statement ran), so that a client need not parse the message. An
// error that is already a gRPC status passes through.
func statusError(err error, queryID string) error {
	if err == nil {
		return nil
	}
	var le *errs.Error
	if _, ok := status.FromError(err); ok && !errors.As(err, &le) {
		return err
	}
	code := errs.CodeOf(err)
	st := status.New(grpcCode(code), fmt.Sprintf("%s: %s", code, err.Error()))
	info := &errdetails.ErrorInfo{Reason: string(code), Domain: errorDomain, Metadata: map[string]string{}}
	if p := errs.PositionOf(err); p != errs.NoPosition {
		info.Metadata["position"] = strconv.Itoa(p)
	}
	if queryID != "" {
		info.Metadata["query_id"] = queryID
	}
	if withInfo, derr := st.WithDetails(info); derr == nil {
		st = withInfo
	}
	return st.Err()
}
