package flv

import "encoding/binary"

// AMF0 type markers.
const (
	amfNumber    = 0x00
	amfBoolean   = 0x01
	amfString    = 0x02
	amfECMAArray = 0x08
)

func appendAMFString(dst []byte, s string) []byte {
	dst = append(dst, amfString)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(s)))
	return append(dst, s...)
}
