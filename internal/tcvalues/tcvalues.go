// Package tcvalues is what ffmpeg and the server take for values of the transcoding object
// (spec 2.2) that the API must refuse at create and transcode must never pass on: the one
// definition both use. It imports only the standard library.
package tcvalues

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// MP3SampleRates are the rates of layer III in MPEG-1 and MPEG-2. MPEG-2.5's 8000, 11025 and
// 12000 Hz are left out, since the server's MP3 reader (MPEG-TS, FLV, fMP4) does not take
// their frames.
var MP3SampleRates = []int{16000, 22050, 24000, 32000, 44100, 48000}

// MP3MaxKbps is the highest MP3 bitrate.
const MP3MaxKbps = 320

// MaxKeyFramesLen is the longest force_key_frames string taken.
const MaxKeyFramesLen = 128

// KeyFramesAlphabet is a pattern (Go and ECMA-262) of the characters CheckKeyFrames may take,
// for documents; CheckKeyFrames checks the syntax.
const KeyFramesAlphabet = `^[A-Za-z0-9_(),.*+\-/:^]{1,128}$`

// ErrKeyFrames is wrapped by CheckKeyFrames.
var ErrKeyFrames = errors.New("not a force_key_frames value ffmpeg takes")

// keyFrameTime is one time of a list, as ffmpeg's duration syntax writes it: seconds with an
// optional unit, or [HH:]MM:SS with an optional fraction.
var keyFrameTime = regexp.MustCompile(`^(?:[0-9]+(?:\.[0-9]+)?(?:s|ms|us)?|(?:[0-9]+:)?[0-5]?[0-9]:[0-5]?[0-9](?:\.[0-9]+)?)$`)

// CheckKeyFrames tells whether s, a force_key_frames string, is one ffmpeg 5.1 takes, in a
// subset of its syntax: "source" or "source_no_drop"; a comma-separated list of times ("0,2,4",
// "1:30", "500ms"); or "expr:" and an expression of numbers, + - * / ^, parentheses, the
// constants t, n, n_forced, prev_forced_n, prev_forced_t, and the functions of funcArgs.
// The subset has no spaces, quotes or leading '-', so s is safe on a command line.
func CheckKeyFrames(s string) error {
	switch {
	case s == "" || len(s) > MaxKeyFramesLen:
		return fmt.Errorf("%w: 1 to %d characters", ErrKeyFrames, MaxKeyFramesLen)
	case s == "source" || s == "source_no_drop":
		return nil
	case strings.HasPrefix(s, "expr:"):
		p := &exprParser{s: s[len("expr:"):]}
		if err := p.expr(); err != nil {
			return err
		}
		if p.s != "" {
			return fmt.Errorf("%w: unexpected %q in the expression", ErrKeyFrames, p.s)
		}
		return nil
	}
	for _, t := range strings.Split(s, ",") {
		if !keyFrameTime.MatchString(t) {
			return fmt.Errorf("%w: %q is neither a time (2, 1.5, 500ms, 1:30) nor expr:<expression>", ErrKeyFrames, t)
		}
	}
	return nil
}

// Names an expression may use: constants, and functions with their numbers of arguments.
var (
	exprConsts = map[string]bool{"t": true, "n": true, "n_forced": true, "prev_forced_n": true, "prev_forced_t": true,
		"PI": true, "E": true, "PHI": true}
	funcArgs = map[string][2]int{ // least and most arguments
		"abs": {1, 1}, "floor": {1, 1}, "ceil": {1, 1}, "trunc": {1, 1}, "round": {1, 1}, "not": {1, 1}, "sqrt": {1, 1},
		"mod": {2, 2}, "max": {2, 2}, "min": {2, 2}, "eq": {2, 2}, "gte": {2, 2}, "gt": {2, 2}, "lte": {2, 2}, "lt": {2, 2},
		"if": {2, 3}, "ifnot": {2, 3}, "between": {3, 3}, "clip": {3, 3},
		"exp": {1, 1}, "log": {1, 1}, "sin": {1, 1}, "cos": {1, 1}, "tan": {1, 1}, "asin": {1, 1}, "acos": {1, 1},
		"atan": {1, 1}, "sinh": {1, 1}, "cosh": {1, 1}, "tanh": {1, 1}, "sgn": {1, 1}, "isnan": {1, 1}, "isinf": {1, 1},
		"squish": {1, 1}, "gauss": {1, 1}, "pow": {2, 2}, "atan2": {2, 2}, "hypot": {2, 2}, "bitand": {2, 2},
		"bitor": {2, 2}, "lerp": {3, 3},
	}
	exprNumber = regexp.MustCompile(`^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)`)
	exprName   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*`)
)

// exprParser reads an expression of ffmpeg's eval grammar from the front of s.
type exprParser struct{ s string }

func (p *exprParser) fail(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrKeyFrames, fmt.Sprintf(format, a...))
}

// expr: term {(+|-) term}
func (p *exprParser) expr() error { return p.chain("+-", p.term) }

// term: power {(*|/) power}
func (p *exprParser) term() error { return p.chain("*/", p.power) }

// power: factor {^ factor}
func (p *exprParser) power() error { return p.chain("^", p.factor) }

// chain reads operands joined by any of the operators ops.
func (p *exprParser) chain(ops string, operand func() error) error {
	for {
		if err := operand(); err != nil {
			return err
		}
		if p.s == "" || !strings.ContainsRune(ops, rune(p.s[0])) {
			return nil
		}
		p.s = p.s[1:]
	}
}

// factor: [+|-] (number | constant | (expr) | function(expr[,expr[,expr]]))
func (p *exprParser) factor() error {
	if p.s != "" && (p.s[0] == '+' || p.s[0] == '-') {
		p.s = p.s[1:]
	}
	if m := exprNumber.FindString(p.s); m != "" {
		p.s = p.s[len(m):]
		return nil
	}
	if strings.HasPrefix(p.s, "(") {
		p.s = p.s[1:]
		if err := p.expr(); err != nil {
			return err
		}
		return p.close()
	}
	name := exprName.FindString(p.s)
	if name == "" {
		return p.fail("a number, a name or '(' expected at %q", p.s)
	}
	p.s = p.s[len(name):]
	if !strings.HasPrefix(p.s, "(") {
		if !exprConsts[name] {
			return p.fail("unknown constant %q (t, n, n_forced, prev_forced_n, prev_forced_t)", name)
		}
		return nil
	}
	limits, ok := funcArgs[name]
	if !ok {
		return p.fail("unknown function %q", name)
	}
	p.s = p.s[1:]
	args := 0
	for {
		if err := p.expr(); err != nil {
			return err
		}
		args++
		if !strings.HasPrefix(p.s, ",") {
			break
		}
		p.s = p.s[1:]
	}
	if args < limits[0] || args > limits[1] {
		return p.fail("%s takes %d to %d arguments, not %d", name, limits[0], limits[1], args)
	}
	return p.close()
}

func (p *exprParser) close() error {
	if !strings.HasPrefix(p.s, ")") {
		return p.fail("')' expected at %q", p.s)
	}
	p.s = p.s[1:]
	return nil
}
