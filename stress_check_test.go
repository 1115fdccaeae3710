package qd

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

// The stress test's rule for errors (doc.go): every error of the public
// API matches one of qd's sentinels or is an *ArgumentError.

// stressSentinels are the errors every error of the API must match.
var stressSentinels = []error{ErrClosed, ErrInvalidArgument, ErrForeign, ErrUnsupported, ErrOutOfMemory, ErrDeviceLost, ErrCapturing}

// stressBadError says what is wrong with err, an error of the public API:
// "" when it, and each branch of every errors.Join in it, matches a
// sentinel or is an *ArgumentError. A joined error matches a sentinel as
// soon as one branch does, which would hide a raw backend error joined to
// a refusal. Other errors with several causes (an error that classifies
// its cause, as unavailableError does) need one that matches.
func stressBadError(err error) string {
	var bad func(err error) bool
	bad = func(err error) bool {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			if fmt.Sprintf("%T", err) == "*errors.joinError" {
				return slices.ContainsFunc(j.Unwrap(), bad)
			}
			return !slices.ContainsFunc(j.Unwrap(), func(e error) bool { return !bad(e) })
		}
		if _, ok := err.(*ArgumentError); ok {
			return false
		}
		for _, s := range stressSentinels {
			if err == s {
				return false
			}
			if is, ok := err.(interface{ Is(error) bool }); ok && is.Is(s) {
				return false
			}
		}
		if u := errors.Unwrap(err); u != nil {
			return bad(u)
		}
		return true
	}
	if bad(err) {
		return "an error matching no sentinel (in itself or in a joined branch)"
	}
	return ""
}

// TestStressBadError checks the rule itself: a raw error, alone or joined
// to a sentinel, breaks it; a cause classified by a sentinel does not.
func TestStressBadError(t *testing.T) {
	raw := errors.New("raw")
	for _, c := range []struct {
		err error
		ok  bool
	}{
		{ErrClosed, true},
		{fmt.Errorf("qd: x: %w", ErrClosed), true},
		{&ArgumentError{Kernel: "k", Msg: "m"}, true},
		{&captureError{call: "c", origin: "o", why: "w"}, true},
		{&unavailableError{arch: CUDA, err: raw}, true},
		{fmt.Errorf("%w: %w", ErrUnsupported, raw), true},
		{raw, false},
		{fmt.Errorf("qd: x: %w", raw), false},
		{errors.Join(closedErr("a"), raw), false},
		{fmt.Errorf("qd: Capture: %w", errors.Join(&captureError{}, raw)), false},
		{errors.Join(closedErr("a"), &captureError{}), true},
	} {
		if got := stressBadError(c.err) == ""; got != c.ok {
			t.Errorf("stressBadError(%v) == \"\" is %v, want %v", c.err, got, c.ok)
		}
	}
}
