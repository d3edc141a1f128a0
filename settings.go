package lore

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/sql"
)

// settingsValues are a statement's settings (SPEC §6).
type settingsValues struct {
	UseStatistics       bool
	Approximate         bool
	ResultCache         bool
	LateMaterialisation string
	// MemoryLimit is the statement's own memory limit in bytes (0: the engine's).
	MemoryLimit int64
	// Limits are the guardrails the request asked for (zero: none asked); the
	// statement runs under them bounded by the engine's ceilings (Guardrails.within).
	Limits Guardrails
	// DryRun asks for the plan's estimate instead of running the statement.
	DryRun bool
	// Execution is where the reading work runs: "local", "beam" (on Apache Beam,
	// as the engine's BeamOptions say), or "auto": on Beam when the work reads at
	// least the engine's BeamOptions.Above, else locally.
	Execution string
	explicit  map[string]string
}

var settingKeys = []string{"approximate", "dry_run", "execution", "late_materialisation", "max_execution_ms", "max_result_bytes",
	"max_result_rows", "max_rows_scanned", "memory_limit", "result_cache", "use_statistics"}

func defaultSettings() *settingsValues {
	return &settingsValues{UseStatistics: true, ResultCache: true, LateMaterialisation: "auto", Execution: "auto", explicit: map[string]string{}}
}

// resolveSettings validates the settings given with a request.
func resolveSettings(m map[string]string) (*settingsValues, error) {
	s := defaultSettings()
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := s.apply(strings.ToLower(k), m[k], errs.NoPosition); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// set applies a SET SESSION value.
func (s *settingsValues) set(key string, v sql.OptionValue, pos int) error {
	var text string
	switch v.Kind {
	case sql.ValueBool:
		text = strconv.FormatBool(v.Bool)
	case sql.ValueString, sql.ValueIdent:
		text = v.Str
	case sql.ValueInt:
		text = strconv.FormatInt(v.Int, 10)
	case sql.ValueFloat:
		text = strconv.FormatFloat(v.Float, 'g', -1, 64)
	default:
		return errs.At(errs.InvalidSetting, pos, "setting %q takes a single value", key)
	}
	return s.apply(strings.ToLower(key), text, pos)
}

func (s *settingsValues) apply(key, value string, pos int) error {
	bad := func(want string) error {
		return errs.At(errs.InvalidSetting, pos, "invalid value %q for setting %q: want %s", value, key, want)
	}
	parseBool := func() (bool, error) {
		switch strings.ToLower(strings.TrimSpace(value)) {
		case "true", "on", "1", "yes":
			return true, nil
		case "false", "off", "0", "no":
			return false, nil
		}
		return false, bad("true or false")
	}
	var err error
	switch key {
	case "use_statistics":
		s.UseStatistics, err = parseBool()
	case "approximate":
		s.Approximate, err = parseBool()
	case "result_cache":
		s.ResultCache, err = parseBool()
	case "late_materialisation":
		v := strings.ToLower(strings.TrimSpace(value))
		if v != "auto" && v != "always" && v != "never" {
			return bad("auto, always or never")
		}
		s.LateMaterialisation = v
	case "execution":
		v := strings.ToLower(strings.TrimSpace(value))
		if v != "auto" && v != "local" && v != "beam" {
			return bad("auto, local or beam")
		}
		s.Execution = v
	case "memory_limit":
		n, perr := ParseMemoryLimit(value)
		if perr != nil {
			return bad("a size such as 512MiB or 1GiB, at least 1 MiB")
		}
		s.MemoryLimit = n
	case "dry_run":
		s.DryRun, err = parseBool()
	case "max_execution_ms":
		n, ok := parseCount(value)
		if !ok || n > math.MaxInt64/int64(time.Millisecond) {
			return bad("a positive number of milliseconds")
		}
		s.Limits.MaxExecution = time.Duration(n) * time.Millisecond
	case "max_rows_scanned", "max_result_rows":
		n, ok := parseCount(value)
		if !ok {
			return bad("a positive number of rows")
		}
		if key == "max_rows_scanned" {
			s.Limits.MaxRowsScanned = n
		} else {
			s.Limits.MaxResultRows = n
		}
	case "max_result_bytes":
		n, perr := parseBytes(value)
		if perr != nil || n < 1 {
			return bad("a positive size such as 65536, 64KiB or 10MiB")
		}
		s.Limits.MaxResultBytes = n
	default:
		return errs.At(errs.InvalidSetting, pos, "unknown setting %q (known: %s)", key, strings.Join(settingKeys, ", "))
	}
	if err != nil {
		return err
	}
	s.explicit[key] = strings.ToLower(strings.TrimSpace(value))
	return nil
}

// parseCount reads a guardrail's count: a positive integer, below 2^53 so that a
// JSON client holds it exactly.
func parseCount(value string) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
	return n, err == nil && n > 0 && n < 1<<53
}

// asMap is the settings as recorded: the ones the request set.
func (s *settingsValues) asMap() map[string]string {
	out := make(map[string]string, len(s.explicit))
	for k, v := range s.explicit {
		out[k] = v
	}
	return out
}
