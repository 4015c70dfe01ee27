package rtmp

import (
	"encoding/binary"
	"fmt"
	"math"
)

// AMF0 type markers (AMF0 specification, section 2.1).
const (
	amfNumber      = 0x00
	amfBoolean     = 0x01
	amfString      = 0x02
	amfObject      = 0x03
	amfNull        = 0x05
	amfUndefined   = 0x06
	amfReference   = 0x07
	amfECMAArray   = 0x08
	amfObjectEnd   = 0x09
	amfStrictArray = 0x0a
	amfDate        = 0x0b
	amfLongString  = 0x0c
	amfTypedObject = 0x10
)

// amfMaxDepth bounds the nesting of objects and arrays a peer can make us descend into.
const amfMaxDepth = 16

// amfProp is one property of an AMF object or ECMA array, kept in order for encoding.
type amfProp struct {
	Key   string
	Value any
}

// amfObj encodes as an AMF0 object; amfECMA as an ECMA array. Decoding gives map[string]any.
type (
	amfObj  []amfProp
	amfECMA []amfProp
)

// amfDecode decodes the AMF0 values of b until its end. Objects and ECMA arrays become
// map[string]any, strict arrays []any, numbers and dates float64, null and undefined nil.
// Every length is checked against the bytes left, so hostile input cannot make it allocate
// more than a few times len(b).
func amfDecode(b []byte) ([]any, error) {
	d := amfDecoder{b: b}
	var vals []any
	for d.off < len(d.b) {
		v, err := d.value(0)
		if err != nil {
			return vals, err
		}
		vals = append(vals, v)
	}
	return vals, nil
}

type amfDecoder struct {
	b   []byte
	off int
}

func (d *amfDecoder) need(n int) error {
	if n < 0 || len(d.b)-d.off < n {
		return fmt.Errorf("amf0: %d bytes needed at offset %d of %d: %w", n, d.off, len(d.b), ErrMalformed)
	}
	return nil
}

func (d *amfDecoder) u16() (int, error) {
	if err := d.need(2); err != nil {
		return 0, err
	}
	v := binary.BigEndian.Uint16(d.b[d.off:])
	d.off += 2
	return int(v), nil
}

func (d *amfDecoder) u32() (int, error) {
	if err := d.need(4); err != nil {
		return 0, err
	}
	v := binary.BigEndian.Uint32(d.b[d.off:])
	d.off += 4
	if v > math.MaxInt32 {
		return 0, fmt.Errorf("amf0: length %d: %w", v, ErrMalformed)
	}
	return int(v), nil
}

func (d *amfDecoder) str(n int) (string, error) {
	if err := d.need(n); err != nil {
		return "", err
	}
	s := string(d.b[d.off : d.off+n])
	d.off += n
	return s, nil
}

func (d *amfDecoder) value(depth int) (any, error) {
	if depth > amfMaxDepth {
		return nil, fmt.Errorf("amf0: nested deeper than %d: %w", amfMaxDepth, ErrMalformed)
	}
	if err := d.need(1); err != nil {
		return nil, err
	}
	marker := d.b[d.off]
	d.off++
	switch marker {
	case amfNumber:
		if err := d.need(8); err != nil {
			return nil, err
		}
		v := math.Float64frombits(binary.BigEndian.Uint64(d.b[d.off:]))
		d.off += 8
		return v, nil
	case amfBoolean:
		if err := d.need(1); err != nil {
			return nil, err
		}
		d.off++
		return d.b[d.off-1] != 0, nil
	case amfString:
		n, err := d.u16()
		if err != nil {
			return nil, err
		}
		return d.str(n)
	case amfLongString:
		n, err := d.u32()
		if err != nil {
			return nil, err
		}
		return d.str(n)
	case amfNull, amfUndefined:
		return nil, nil
	case amfReference:
		_, err := d.u16()
		return nil, err // references are not resolved; commands do not use them
	case amfDate:
		if err := d.need(10); err != nil {
			return nil, err
		}
		v := math.Float64frombits(binary.BigEndian.Uint64(d.b[d.off:]))
		d.off += 10 // milliseconds, then a 16-bit time zone
		return v, nil
	case amfObject:
		return d.props(depth)
	case amfTypedObject:
		n, err := d.u16()
		if err != nil {
			return nil, err
		}
		if _, err := d.str(n); err != nil { // class name
			return nil, err
		}
		return d.props(depth)
	case amfECMAArray:
		if _, err := d.u32(); err != nil { // an approximate count: the end marker rules
			return nil, err
		}
		return d.props(depth)
	case amfStrictArray:
		n, err := d.u32()
		if err != nil {
			return nil, err
		}
		if err := d.need(n); err != nil { // each value takes at least one byte
			return nil, err
		}
		arr := make([]any, 0, n)
		for range n {
			v, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		return arr, nil
	}
	return nil, fmt.Errorf("amf0: marker 0x%02x at offset %d: %w", marker, d.off-1, ErrMalformed)
}

// props reads properties up to the object end marker (an empty key and 0x09).
func (d *amfDecoder) props(depth int) (map[string]any, error) {
	m := make(map[string]any)
	for {
		n, err := d.u16()
		if err != nil {
			return nil, err
		}
		if n == 0 {
			if err := d.need(1); err != nil {
				return nil, err
			}
			if d.b[d.off] == amfObjectEnd {
				d.off++
				return m, nil
			}
		}
		key, err := d.str(n)
		if err != nil {
			return nil, err
		}
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m[key] = v
	}
}

// amfAppend appends the AMF0 encoding of each value: float64 and the integer types as numbers,
// bool, string, nil as null, amfObj, amfECMA, map[string]any (as an object, in no particular
// order) and []any as a strict array.
func amfAppend(dst []byte, vals ...any) []byte {
	for _, v := range vals {
		dst = amfAppendValue(dst, v)
	}
	return dst
}

func amfAppendValue(dst []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(dst, amfNull)
	case float64:
		return amfAppendNumber(dst, v)
	case int:
		return amfAppendNumber(dst, float64(v))
	case int64:
		return amfAppendNumber(dst, float64(v))
	case uint32:
		return amfAppendNumber(dst, float64(v))
	case bool:
		b := byte(0)
		if v {
			b = 1
		}
		return append(dst, amfBoolean, b)
	case string:
		if len(v) > math.MaxUint16 {
			dst = append(dst, amfLongString)
			dst = binary.BigEndian.AppendUint32(dst, uint32(len(v)))
			return append(dst, v...)
		}
		dst = append(dst, amfString)
		return amfAppendKey(dst, v)
	case amfObj:
		return amfAppendProps(append(dst, amfObject), v)
	case amfECMA:
		dst = append(dst, amfECMAArray)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(v)))
		return amfAppendProps(dst, v)
	case map[string]any:
		props := make(amfObj, 0, len(v))
		for k, x := range v {
			props = append(props, amfProp{k, x})
		}
		return amfAppendProps(append(dst, amfObject), props)
	case []any:
		dst = append(dst, amfStrictArray)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(v)))
		return amfAppend(dst, v...)
	}
	return append(dst, amfUndefined)
}

func amfAppendNumber(dst []byte, f float64) []byte {
	dst = append(dst, amfNumber)
	return binary.BigEndian.AppendUint64(dst, math.Float64bits(f))
}

// amfAppendKey appends a string without its marker: a 16-bit length, then the bytes (cut at
// 65535, which no key of ours reaches).
func amfAppendKey(dst []byte, s string) []byte {
	s = s[:min(len(s), math.MaxUint16)]
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(s)))
	return append(dst, s...)
}

func amfAppendProps(dst []byte, props []amfProp) []byte {
	for _, p := range props {
		dst = amfAppendKey(dst, p.Key)
		dst = amfAppendValue(dst, p.Value)
	}
	return append(dst, 0, 0, amfObjectEnd)
}
