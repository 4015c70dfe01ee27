package rtsp

import (
	"errors"
	"fmt"
	"net"
	"strconv"
)

// pairTries bounds the search for a free pair of ephemeral ports.
const pairTries = 64

// udpReadBuffer is the receive buffer asked for RTP sockets: a few seconds of a high-bitrate
// stream, so that a busy moment of the process loses nothing. The system caps it
// (net.core.rmem_max on Linux); asking is best effort.
const udpReadBuffer = 4 << 20

// listenPacket is net.ListenPacket with the larger receive buffer, for gortsplib's clients.
func listenPacket(network, addr string) (net.PacketConn, error) {
	c, err := net.ListenPacket(network, addr)
	if err != nil {
		return nil, err
	}
	if uc, ok := c.(*net.UDPConn); ok {
		_ = uc.SetReadBuffer(udpReadBuffer)
	}
	return c, nil
}

// listenUDPPair binds RTP on an even port of host and RTCP on the next one, as RTSP servers
// announce them. With port 0 it picks a free pair among the system's ephemeral ports.
func listenUDPPair(host string, port int) (rtpConn, rtcpConn *net.UDPConn, err error) {
	if port != 0 {
		if port%2 != 0 || port < 0 || port > 65534 {
			return nil, nil, fmt.Errorf("RTP port %d: must be even, below 65535", port)
		}
		return bindPair(host, port)
	}
	for range pairTries {
		c, err := net.ListenPacket("udp", net.JoinHostPort(host, "0"))
		if err != nil {
			return nil, nil, err
		}
		uc := c.(*net.UDPConn)
		p := uc.LocalAddr().(*net.UDPAddr).Port
		// Keep the port the system gave and bind its partner.
		partner := p + 1
		if p%2 != 0 {
			partner = p - 1
		}
		if partner <= 0 || partner > 65535 {
			uc.Close()
			continue
		}
		pc, err := net.ListenPacket("udp", net.JoinHostPort(host, strconv.Itoa(partner)))
		if err != nil {
			uc.Close()
			continue
		}
		rtpC, rtcpC := uc, pc.(*net.UDPConn)
		if p%2 != 0 {
			rtpC, rtcpC = rtcpC, rtpC
		}
		_ = rtpC.SetReadBuffer(udpReadBuffer)
		return rtpC, rtcpC, nil
	}
	return nil, nil, errors.New("no free pair of UDP ports for RTP and RTCP")
}

// bindPair binds port and port+1 of host.
func bindPair(host string, port int) (*net.UDPConn, *net.UDPConn, error) {
	a, err := net.ListenPacket("udp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return nil, nil, err
	}
	b, err := net.ListenPacket("udp", net.JoinHostPort(host, strconv.Itoa(port+1)))
	if err != nil {
		a.Close()
		return nil, nil, err
	}
	_ = a.(*net.UDPConn).SetReadBuffer(udpReadBuffer)
	return a.(*net.UDPConn), b.(*net.UDPConn), nil
}
