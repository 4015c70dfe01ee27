package mpegts

// crcTable is the CRC-32/MPEG-2 table: polynomial 0x04C11DB7, most significant bit first.
var crcTable = func() (t [256]uint32) {
	for i := range t {
		c := uint32(i) << 24
		for range 8 {
			if c&0x80000000 != 0 {
				c = c<<1 ^ 0x04c11db7
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// crc32MPEG returns the CRC-32/MPEG-2 of b (initial value all ones, no final xor), the
// checksum that ends every PSI section.
func crc32MPEG(b []byte) uint32 {
	c := uint32(0xffffffff)
	for _, v := range b {
		c = c<<8 ^ crcTable[byte(c>>24)^v]
	}
	return c
}
