package transcode

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/sluicemedia/sluice/internal/tcvalues"
)

// keyFramesSet tells whether a force_key_frames value asks for anything.
func keyFramesSet(v any) bool {
	if s, ok := v.(string); ok {
		return strings.TrimSpace(s) != ""
	}
	return v != nil
}

// keyFrameExpr maps force_key_frames to the value of ffmpeg's -force_key_frames: a number N
// of seconds becomes expr:gte(t,n_forced*N) (a key frame every N seconds); a string is an
// string ffmpeg takes as is (an expression, a list of times), checked again as the API does.
func keyFrameExpr(v any) (string, error) {
	var n float64
	switch x := v.(type) {
	case float64:
		n = x
	case float32:
		n = float64(x)
	case int:
		n = float64(x)
	case int64:
		n = float64(x)
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return "", fmt.Errorf("force_key_frames %q: %w: not a number", string(x), ErrInvalid)
		}
		n = f
	case string:
		s := strings.TrimSpace(x)
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			n = f
			break
		}
		if err := tcvalues.CheckKeyFrames(s); err != nil {
			return "", fmt.Errorf("force_key_frames %q: %w: %w", s, ErrInvalid, err)
		}
		return s, nil
	default:
		return "", fmt.Errorf("force_key_frames %v: %w: want a number of seconds or an expression", v, ErrInvalid)
	}
	if math.IsNaN(n) || math.IsInf(n, 0) || n <= 0 {
		return "", fmt.Errorf("force_key_frames %v: %w: seconds must be above 0", n, ErrInvalid)
	}
	return "expr:gte(t,n_forced*" + fmtNum(n) + ")", nil
}

// fmtNum writes a number the shortest way: 2, 1.5.
func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
