package dash

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// errTemplate is wrapped by the errors of expand.
var errTemplate = errors.New("segment template")

// tmplVars are the values a SegmentTemplate's identifiers take for one segment.
type tmplVars struct {
	repID     string
	bandwidth uint32
	number    uint64
	time      uint64
}

// expand replaces the identifiers of a SegmentTemplate media or initialization string
// (ISO/IEC 23009-1 5.3.9.4.4): $RepresentationID$, $Number$, $Time$, $Bandwidth$, each of the
// numeric ones with an optional width format tag %0[width]d, and $$ for a dollar sign.
func expand(tmpl string, v tmplVars) (string, error) {
	if !strings.Contains(tmpl, "$") {
		return tmpl, nil
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(tmpl, '$')
		if i < 0 {
			b.WriteString(tmpl)
			return b.String(), nil
		}
		b.WriteString(tmpl[:i])
		tmpl = tmpl[i+1:]
		j := strings.IndexByte(tmpl, '$')
		if j < 0 {
			return "", fmt.Errorf("%w: unclosed $ in %q", errTemplate, tmpl)
		}
		id, format := tmpl[:j], ""
		tmpl = tmpl[j+1:]
		if k := strings.IndexByte(id, '%'); k >= 0 {
			id, format = id[:k], id[k:]
		}
		var n uint64
		switch id {
		case "":
			if format != "" {
				return "", fmt.Errorf("%w: format on $$", errTemplate)
			}
			b.WriteByte('$')
			continue
		case "RepresentationID":
			if format != "" {
				return "", fmt.Errorf("%w: format on $RepresentationID$", errTemplate)
			}
			b.WriteString(v.repID)
			continue
		case "Number":
			n = v.number
		case "Time":
			n = v.time
		case "Bandwidth":
			n = uint64(v.bandwidth)
		default:
			return "", fmt.Errorf("%w: unknown identifier $%s$", errTemplate, id)
		}
		s, err := formatNumber(n, format)
		if err != nil {
			return "", err
		}
		b.WriteString(s)
	}
}

// formatNumber renders n with a width format tag: "" or "%d" plainly, "%0Nd" padded with
// zeros to N digits (the only forms the standard allows; widths up to 32).
func formatNumber(n uint64, format string) (string, error) {
	s := strconv.FormatUint(n, 10)
	switch {
	case format == "" || format == "%d":
		return s, nil
	case strings.HasPrefix(format, "%0") && strings.HasSuffix(format, "d") && len(format) > 3:
		w, err := strconv.Atoi(format[2 : len(format)-1])
		if err != nil || w < 1 || w > 32 {
			return "", fmt.Errorf("%w: width format %q", errTemplate, format)
		}
		if len(s) < w {
			s = strings.Repeat("0", w-len(s)) + s
		}
		return s, nil
	}
	return "", fmt.Errorf("%w: width format %q", errTemplate, format)
}
