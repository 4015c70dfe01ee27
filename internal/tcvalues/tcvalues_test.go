package tcvalues

import (
	"bytes"
	"context"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// TestCheckKeyFramesAgreesWithFFmpeg: what CheckKeyFrames takes, ffmpeg takes; what it
// refuses, ffmpeg refuses too, except the spellings outside the subset (subset: true).
func TestCheckKeyFramesAgreesWithFFmpeg(t *testing.T) {
	alphabet := regexp.MustCompile(KeyFramesAlphabet)
	testutil.RequireFFmpeg(t)
	cases := []struct {
		s      string
		ok     bool
		subset bool // ffmpeg takes it, CheckKeyFrames does not
	}{
		{s: "expr:gte(t,n_forced*2)", ok: true},
		{s: "expr:if(eq(n,0),1,gte(t-prev_forced_t,1.5))", ok: true},
		{s: "expr:between(mod(n,50),0,0)+not(n)", ok: true},
		{s: "expr:-(t/2)*PI+clip(t,0,1)", ok: true},
		{s: "expr:ifnot(lt(t,1),gte(t,prev_forced_t+2))", ok: true},
		{s: "expr:gte(t,pow(2,n_forced))*lt(2^n_forced,1000)", ok: true},
		{s: "expr:gte(t,floor(hypot(n,1)/25)+sgn(log(exp(1))))", ok: true},
		{s: "expr:pow(2)"},
		{s: "0,2,4,6", ok: true},
		{s: "1:00,01:30.5,0:00:10", ok: true},
		{s: "2s,500ms,1500000us,2.25", ok: true},
		{s: "source", ok: true},
		{s: "source_no_drop", ok: true},
		{s: "expr:gte(t,n_forced*2"},
		{s: "expr:gte(t)"},
		{s: "expr:gte(t,1,2)"},
		{s: "expr:foo"},
		{s: "expr:foo(t)"},
		{s: "expr:gte(t,n_forced*2))"},
		{s: "expr:"},
		{s: "expr:t:2"},
		{s: "expr:2t"},
		{s: "abc"},
		{s: "2,abc"},
		{s: "0,,2"},
		{s: "1:60"},
		{s: "90:00"},
		{s: "2h"},
		{s: "expr:2k", subset: true},
		{s: "expr:gte(t,0x2)", subset: true},
		{s: "chapters", subset: true},
	}
	for _, c := range cases {
		err := CheckKeyFrames(c.s)
		if (err == nil) != c.ok {
			t.Errorf("CheckKeyFrames(%q) = %v, want ok %v", c.s, err, c.ok)
		}
		if c.ok && !alphabet.MatchString(c.s) {
			t.Errorf("%q is taken but outside KeyFramesAlphabet, the pattern the OpenAPI document shows", c.s)
		}
		if ffErr := ffmpegTakes(t, c.s); (ffErr == nil) != (c.ok || c.subset) {
			t.Errorf("ffmpeg -force_key_frames %q: %v, want ok %v", c.s, ffErr, c.ok || c.subset)
		}
	}
}

// ffmpegTakes encodes a few frames with -force_key_frames s.
func ffmpegTakes(t *testing.T, s string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error",
		"-f", "lavfi", "-i", "testsrc2=size=64x64:rate=25", "-t", "0.2", "-c:v", "libx264", "-preset", "ultrafast",
		"-force_key_frames", s, "-f", "null", "-")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Logf("ffmpeg -force_key_frames %q: %v: %s", s, err, bytes.TrimSpace(stderr.Bytes()))
		return err
	}
	return nil
}
