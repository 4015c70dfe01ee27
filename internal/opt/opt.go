// Package opt holds the one rule by which options structs take their defaults: a setting left
// at its zero value (or, for a number, at zero or below) means "the default". Each options
// struct's withDefaults calls these, one line a setting.
package opt

import "time"

// number is the kinds of setting Positive applies to.
type number interface {
	~int | ~int32 | ~int64 | ~uint32 | ~uint64 | ~float64
}

// Positive sets *v to def when *v is zero or negative.
func Positive[T number](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// Zero sets *v to def when *v is its type's zero value (an empty string, a nil logger).
func Zero[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// Clock sets *now to time.Now when it is nil: the options' clock, replaceable by tests.
func Clock(now *func() time.Time) {
	if *now == nil {
		*now = time.Now
	}
}
