// sluice watch page: plays one player's live stream with hls.js (the browser's own HLS where
// MediaSource is missing) or, with ?format=dash, dash.js. The server puts the player's settings
// in data attributes of #watch; this script applies them and writes back what the player
// library reports it applied (data-applied-*), and shows it in #settings.
'use strict';
(function () {
  const root = document.getElementById('watch');
  const video = document.getElementById('video');
  const status = document.getElementById('status');
  const settings = document.getElementById('settings');
  const cfg = {
    format: root.dataset.format,
    // Absolute, as dash.js's CMCD reporter wants it; the page and its playlists share an origin.
    src: new URL(root.dataset.src, location.href).href,
    initialLiveManifestSize: Number(root.dataset.initialLiveManifestSize),
    liveSyncDurationCount: Number(root.dataset.liveSyncDurationCount),
    lowLatency: root.dataset.lowLatency === 'true',
    worker: root.dataset.hlsWorker,
  };
  // A player that is starting has no playlist yet: retry until it has one.
  const RETRY_MS = 2000;

  function say(text, kind) {
    status.textContent = text;
    status.dataset.kind = kind || 'info';
    root.dataset.state = kind || 'info';
    if (kind === 'error') root.dataset.error = text;
  }

  function applied(lib, values) {
    const parts = [lib];
    for (const [k, v] of Object.entries(values)) {
      root.dataset['applied' + k[0].toUpperCase() + k.slice(1)] = String(v);
      parts.push(k + ' ' + v);
    }
    root.dataset.player = lib;
    settings.textContent = parts.join(' · ');
  }

  // data-error says what went wrong last; playback that resumes clears it.
  video.addEventListener('playing', () => {
    delete root.dataset.error;
    say('playing', 'playing');
  });
  video.addEventListener('waiting', () => say('buffering…', 'waiting'));
  video.addEventListener('error', () => {
    const e = video.error;
    say('video error' + (e ? ': ' + (e.message || 'code ' + e.code) : ''), 'error');
  });

  function playHLS() {
    const Hls = window.Hls;
    if (Hls && Hls.isSupported()) {
      let hls = null;
      const start = () => {
        const config = {
          initialLiveManifestSize: cfg.initialLiveManifestSize,
          lowLatencyMode: cfg.lowLatency,
          workerPath: cfg.worker,
        };
        if (cfg.lowLatency) {
          // LL-HLS: the playlist's PART-HOLD-BACK sets the distance to the live edge (a
          // liveSyncDurationCount given here would override it); catch up by playing faster.
          config.maxLiveSyncPlaybackRate = 1.5;
        } else {
          config.liveSyncDurationCount = cfg.liveSyncDurationCount;
        }
        hls = new Hls(config);
        const shown = {
          initialLiveManifestSize: hls.config.initialLiveManifestSize,
          lowLatencyMode: hls.config.lowLatencyMode,
        };
        if (!cfg.lowLatency) shown.liveSyncDurationCount = hls.config.liveSyncDurationCount;
        applied('hls.js ' + Hls.version, shown);
        hls.on(Hls.Events.ERROR, (_, data) => {
          if (!data.fatal) return;
          if (data.type === Hls.ErrorTypes.MEDIA_ERROR) {
            say('media error, recovering: ' + data.details, 'waiting');
            hls.recoverMediaError();
            return;
          }
          say('stream not available yet (' + data.details + '), retrying…', 'waiting');
          hls.destroy();
          setTimeout(start, RETRY_MS);
        });
        hls.loadSource(cfg.src);
        hls.attachMedia(video);
      };
      start();
      return;
    }
    if (video.canPlayType('application/vnd.apple.mpegurl')) {
      applied('native HLS', {});
      settings.textContent += ' (the browser plays HLS itself; hls.js settings do not apply)';
      video.src = cfg.src;
      return;
    }
    say('this browser plays neither HLS nor MediaSource', 'error');
  }

  function playDASH() {
    const dashjs = window.dashjs;
    if (!dashjs) {
      say('dash.js did not load', 'error');
      return;
    }
    const player = dashjs.MediaPlayer().create();
    // A low-latency player's MPD carries availabilityTimeOffset and a ServiceDescription
    // latency target, which dash.js 5 follows (its low-latency mode comes from the manifest);
    // catch-up keeps it at that target. A classic player keeps the fragment-count delay.
    player.updateSettings(cfg.lowLatency
      ? { streaming: { liveCatchup: { enabled: true } } }
      : { streaming: { delay: { liveDelayFragmentCount: cfg.liveSyncDurationCount } } });
    player.on(dashjs.MediaPlayer.events.ERROR, (e) => {
      const msg = e && e.error ? (e.error.message || e.error.code) : 'error';
      say('stream not available yet (' + msg + '), retrying…', 'waiting');
      setTimeout(() => player.attachSource(cfg.src), RETRY_MS);
    });
    player.initialize(video, cfg.src, true);
    applied('dash.js ' + player.getVersion(), {
      liveDelayFragmentCount: player.getSettings().streaming.delay.liveDelayFragmentCount,
    });
  }

  video.muted = true;
  if (cfg.format === 'dash') playDASH(); else playHLS();
})();
