// Package awsauth finds AWS credentials and the region where the AWS SDKs look for
// them, with the standard library alone: no SDK package is linked, so a process
// that never talks to S3 pays nothing for it at start.
//
// Chain is the SDKs' credential chain, tried in order:
//
//  1. the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN);
//  2. web identity from the environment (AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN),
//     exchanged with STS;
//  3. the selected profile of the shared files (~/.aws/config, ~/.aws/credentials):
//     an assumed role, SSO, static keys or a credential_process;
//  4. a container's credentials endpoint (ECS, EKS pod identity);
//  5. the instance metadata service of EC2 (IMDSv2, else IMDSv1).
//
// The first link that is configured decides: its credentials, or its error. When
// none is, and no instance metadata service answers, the chain returns ErrNone and
// the caller sends requests unsigned, as for a public bucket.
//
// Invariants:
//   - No error text holds a secret key, a session token, a bearer or web identity
//     token, or a signature; what a service answers is cleaned of any of them that
//     were sent before it is quoted.
//   - The provider of Chain caches its credentials until five minutes before they
//     expire, retrieves once for all callers waiting at the same time, and caches a
//     failure only when it is ErrNone; a refresh that fails leaves the credentials
//     in hand in use until they expire.
//   - Requests to STS, SSO and a container endpoint are tried at most twice; the
//     instance metadata service is given about two seconds in all.
package awsauth
