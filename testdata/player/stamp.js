// Glass-to-glass latency from the stamp the bench's publisher draws on every frame (see
// internal/bench/stamp.go, the same decoder in Go; keep the two in step): a white marker, 24 bits
// of the capture time modulo 2^24 ms in Gray code (least significant first), a parity block that
// makes the ones among code and parity odd, a black marker; blocks of height/18 px (even), the
// row one block from the top-left corner. player.html loads this file with ?stamp=1.
//
// About every 100 ms, on a displayed frame (requestVideoFrameCallback where the browser has it),
// it copies the row onto a canvas, decodes it and records Date.now() − stamp (the publisher runs on
// this machine, so both read one clock). It counts frames that do not decode and the video
// element's waiting events after playback began (stalls). window.__latency(sinceMs) returns
// {samples: [[atMs, latencyMs]...], undecoded, stalls: [atMs...], reads} since sinceMs.
'use strict';
(function () {
  const BITS = 24;
  const BLOCKS = BITS + 3;
  const EVERY_MS = 100;
  const MAX_SAMPLES = 20000;
  const video = document.getElementById('video');
  const canvas = document.createElement('canvas');
  const ctx = canvas.getContext('2d', { willReadFrequently: true });
  const samples = [];
  const undecoded = [];
  const stalls = [];
  let reads = 0;
  let last = 0;
  let playing = false;

  function block(height) { return Math.max(8, Math.floor(height / 18) & ~1); }

  // decode returns the stamp modulo 2^24, or -1 when the markers or the parity do not hold.
  function decode() {
    const w = video.videoWidth;
    const h = video.videoHeight;
    const b = block(h);
    if (!w || !h || (BLOCKS + 1) * b > w || 2 * b > h) return -1;
    const cw = (BLOCKS + 1) * b;
    const ch = 2 * b;
    if (canvas.width !== cw || canvas.height !== ch) { canvas.width = cw; canvas.height = ch; }
    ctx.drawImage(video, 0, 0, cw, ch, 0, 0, cw, ch);
    const px = ctx.getImageData(0, 0, cw, ch).data;
    const bit = (i) => {
      const x0 = b * (1 + i) + b / 4;
      const y0 = b + b / 4;
      let sum = 0;
      let n = 0;
      for (let y = y0; y < y0 + b / 2; y++) {
        for (let x = x0; x < x0 + b / 2; x++) {
          const o = (y * cw + x) * 4;
          sum += 0.299 * px[o] + 0.587 * px[o + 1] + 0.114 * px[o + 2];
          n++;
        }
      }
      return sum / n >= 128 ? 1 : 0;
    };
    if (!bit(0) || bit(BLOCKS - 1)) return -1;
    let gray = 0;
    let ones = 0;
    for (let k = 0; k < BITS; k++) {
      if (bit(1 + k)) { gray += 2 ** k; ones++; }
    }
    ones += bit(1 + BITS);
    if (ones % 2 !== 1) return -1;
    let v = gray;
    for (let s = gray >>> 1; s !== 0; s >>>= 1) v ^= s;
    return v;
  }

  function read() {
    const now = Date.now();
    if (now - last < EVERY_MS || video.readyState < 2) return;
    last = now;
    reads++;
    const code = decode();
    if (code < 0) {
      if (undecoded.length < MAX_SAMPLES) undecoded.push(now);
      return;
    }
    const m = 2 ** BITS;
    const stamp = now - ((((now - code) % m) + m) % m);
    if (samples.length < MAX_SAMPLES) samples.push([now, now - stamp]);
  }

  video.addEventListener('playing', function () { playing = true; });
  video.addEventListener('waiting', function () { if (playing) stalls.push(Date.now()); });
  if ('requestVideoFrameCallback' in HTMLVideoElement.prototype) {
    const onFrame = function () { read(); video.requestVideoFrameCallback(onFrame); };
    video.requestVideoFrameCallback(onFrame);
  } else {
    setInterval(read, EVERY_MS);
  }

  window.__latency = function (sinceMs) {
    const since = Number(sinceMs) || 0;
    return {
      samples: samples.filter((s) => s[0] >= since),
      undecoded: undecoded.filter((t) => t >= since).length,
      stalls: stalls.filter((t) => t >= since),
      reads: reads,
      rvfc: 'requestVideoFrameCallback' in HTMLVideoElement.prototype,
    };
  };
})();
