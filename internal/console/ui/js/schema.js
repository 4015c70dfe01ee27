// Form layouts. Types, ranges, enums and required fields come from the API's own OpenAPI
// document (GET /api/openapi.json, built from the schemas the API validates with); this file
// adds what a schema does not say: labels, help, the spec's recommended values, the order, and
// which fields apply to which input type (the API ignores the fields a type does not use).

export const SERVER_INPUTS = ['INPUT_TYPE_SRT_SOFTWARE', 'INPUT_TYPE_SRT_HARDWARE', 'INPUT_TYPE_RTMP_SOFTWARE', 'INPUT_TYPE_RTMP_HARDWARE'];
export const LISTEN_INPUTS = ['INPUT_TYPE_SRT_LISTEN', 'INPUT_TYPE_RTMP_LISTEN', 'INPUT_TYPE_RTSP_LISTEN', 'INPUT_TYPE_UDP_LISTEN', 'INPUT_TYPE_HTTP_LISTEN'];
export const URL_INPUTS = ['INPUT_TYPE_SRT_URL', 'INPUT_TYPE_RTMP_URL', 'INPUT_TYPE_RTSP_URL', 'INPUT_TYPE_UDP_URL', 'INPUT_TYPE_HTTP_URL',
  'INPUT_TYPE_OTHER', 'INPUT_TYPE_HLS_URL', 'INPUT_TYPE_MPEG_DASH_URL'];
export const TEST_INPUT = ['INPUT_TYPE_GENERATE_TEST_VIDEO'];

// Listen transports: SRT and UDP listen on UDP, the others on TCP (spec 2.1 rule 2).
export const LISTEN_TRANSPORT = { INPUT_TYPE_SRT_LISTEN: 'UDP', INPUT_TYPE_UDP_LISTEN: 'UDP' };

const URL_EXAMPLES = {
  INPUT_TYPE_SRT_URL: 'srt://encoder.example:9000?streamid=cam1&latency=200',
  INPUT_TYPE_RTMP_URL: 'rtmp://origin.example/live/key',
  INPUT_TYPE_RTSP_URL: 'rtsp://user:pass@camera.example:554/stream1',
  INPUT_TYPE_UDP_URL: 'udp://239.1.1.1:5000',
  INPUT_TYPE_HTTP_URL: 'http://origin.example/stream.ts',
  INPUT_TYPE_OTHER: 'any address ffmpeg opens',
  INPUT_TYPE_HLS_URL: 'https://origin.example/live/index.m3u8',
  INPUT_TYPE_MPEG_DASH_URL: 'https://origin.example/live/manifest.mpd',
};

// A field: key (JSON path of the body), label, help, value (the recommended value, prefilled),
// placeholder, when (input types it applies to; the form reads input.input_type), required
// (when the schema cannot say, e.g. required only for some input types), widget (select of
// server modules, password), clearable (a write-only password whose edit offers a box that
// removes it), enum (values when the schema has a pattern instead), labels.
export function inputFields(prefix) {
  const p = prefix || 'input.';
  return [
    { key: p + 'input_type', label: 'Input type', value: 'INPUT_TYPE_GENERATE_TEST_VIDEO', schema: 'Input.input_type',
      help: 'Where the stream comes from.' },
    { key: p + 'input_server_id', label: 'Server module', schema: 'Input.input_server_id', when: SERVER_INPUTS, required: true,
      widget: 'server', help: 'One of this server\'s SRT or RTMP server modules.' },
    { key: p + 'input_stream_id', label: 'Stream id', schema: 'Input.input_stream_id', when: SERVER_INPUTS, required: true,
      help: 'SRT: publisher/<server-slug>/<stream-name>; RTMP: the stream key.' },
    { key: p + 'input_stream_listen_port.port', label: 'Listen port', schema: 'Input.input_stream_listen_port.port',
      when: LISTEN_INPUTS, required: true },
    { key: p + 'input_stream_listen_port.transport', label: 'Listen transport', enum: ['UDP', 'TCP'], when: LISTEN_INPUTS,
      required: true, help: 'UDP for SRT and UDP, TCP for the others.', follows: 'transport' },
    { key: p + 'input_stream_url', label: 'Stream address', schema: 'Input.input_stream_url', when: URL_INPUTS, required: true,
      placeholderBy: URL_EXAMPLES, help: 'Protocol options may follow as a query string.' },
    { key: p + 'module_name', label: 'Module name (optional)', schema: 'Input.module_name', when: LISTEN_INPUTS },
    { key: p + 'encoding_rate', label: 'Frame rate (fps)', schema: 'Input.encoding_rate', when: TEST_INPUT, placeholder: '24' },
    { key: p + 'resolution_width', label: 'Width (px)', schema: 'Input.resolution_width', when: TEST_INPUT, placeholder: '1920' },
    { key: p + 'resolution_height', label: 'Height (px)', schema: 'Input.resolution_height', when: TEST_INPUT, placeholder: '1080' },
    { key: p + 'test_video_bitrate', label: 'Video bitrate (kbit/s)', schema: 'Input.test_video_bitrate', when: TEST_INPUT, placeholder: '6000' },
    { key: p + 'sound_hz', label: 'Tone (Hz)', schema: 'Input.sound_hz', when: TEST_INPUT, placeholder: '216' },
    { key: p + 'video_duration_sec', label: 'Duration (s)', schema: 'Input.video_duration_sec', when: TEST_INPUT, placeholder: '3600' },
  ];
}

// transcodingFields: shown when "Transcode" is ticked; empty fields are left out.
export const transcodingFields = [
  { key: 'transcoding.video_transcoding', label: 'Video codec', schema: 'Transcoding.video_transcoding', value: 'libx264' },
  { key: 'transcoding.output_video_bitrate', label: 'Video bitrate (kbit/s)', schema: 'Transcoding.output_video_bitrate', placeholder: '4000' },
  { key: 'transcoding.frame_width', label: 'Width (px)', schema: 'Transcoding.frame_width', placeholder: '1920' },
  { key: 'transcoding.frame_height', label: 'Height (px)', schema: 'Transcoding.frame_height', placeholder: '1080' },
  { key: 'transcoding.gop', label: 'GOP (frames)', schema: 'Transcoding.gop', placeholder: '48', help: 'Twice the frame rate is a 2-second GOP.' },
  { key: 'transcoding.force_key_frames', label: 'Key frame every (s)', schema: 'Transcoding.force_key_frames', value: '2',
    help: 'A key frame every 2 s is recommended.', text: true },
  { key: 'transcoding.preset', label: 'Preset', schema: 'Transcoding.preset' },
  { key: 'transcoding.tune', label: 'Tune', schema: 'Transcoding.tune' },
  { key: 'transcoding.crf', label: 'CRF (0 lossless … 51 worst)', schema: 'Transcoding.crf' },
  { key: 'transcoding.pix_fmt', label: 'Pixel format', schema: 'Transcoding.pix_fmt' },
  { key: 'transcoding.filter_fps', label: 'Output frame rate (fps)', schema: 'Transcoding.filter_fps' },
  { key: 'transcoding.audio_trancoding', label: 'Audio codec', schema: 'Transcoding.audio_trancoding', value: 'aac',
    help: 'aac is recommended: some browsers handle mp3 poorly.' },
  { key: 'transcoding.output_audio_bitrate', label: 'Audio bitrate (kbit/s)', schema: 'Transcoding.output_audio_bitrate', placeholder: '128' },
  { key: 'transcoding.sample_rate', label: 'Sample rate (Hz)', schema: 'Transcoding.sample_rate' },
  { key: 'transcoding.slices', label: 'Slices (accelerator cards)', schema: 'Transcoding.slices' },
  { key: 'transcoding.cores', label: 'Cores (accelerator cards)', schema: 'Transcoding.cores' },
];

// Module forms: sections of fields; component names the OpenAPI schema of the record.
export const forms = {
  players: {
    component: 'Player',
    sections: [
      { title: 'Player', fields: [
        { key: 'vod_name', label: 'Name', schema: 'Player.vod_name' },
        { key: 'vod_port', label: 'Port (TCP)', schema: 'Player.vod_port', value: 8081, freePort: true,
          help: 'The player serves HLS, DASH and its watch page on this port.' },
      ] },
      { title: 'Input', fields: inputFields() },
      { title: 'Playback', fields: [
        { key: 'initial_live_manifest_size', label: 'Initial live manifest size (segments)', schema: 'Player.initial_live_manifest_size', value: 3,
          help: 'Segments loaded before playback starts (hls.js initialLiveManifestSize); 3 recommended.' },
        { key: 'live_sync_duration_count', label: 'Live sync duration count (segments)', schema: 'Player.live_sync_duration_count', value: 4,
          help: 'How many segments behind the live edge players stay (hls.js liveSyncDurationCount); 4 recommended.' },
        { key: 'hls_fragment_size', label: 'HLS fragment size (s)', schema: 'Player.hls_fragment_size', value: 3 },
        { key: 'hls_fragment_length', label: 'HLS playlist length (s)', schema: 'Player.hls_fragment_length', value: 60 },
        { key: 'dash_fragment_size', label: 'DASH fragment size (s)', schema: 'Player.dash_fragment_size', value: 3 },
        { key: 'dash_fragment_length', label: 'DASH playlist length (s)', schema: 'Player.dash_fragment_length', value: 60 },
        { key: 'low_latency', label: 'Low-latency HLS', schema: 'Player.low_latency',
          help: 'LL-HLS: partial segments, blocking playlist reloads and preload hints; with 1 s GOPs and 1 s fragments players stay 1–2 s behind live. DASH stays classic.' },
        { key: 'part_duration_ms', label: 'LL-HLS part duration (ms)', schema: 'Player.part_duration_ms', placeholder: '333',
          help: 'Target length of a partial segment, 100 to 1000 ms and below the HLS fragment size; 333 when left empty.' },
      ] },
      { title: 'Transcoding', optional: 'transcoding', fields: transcodingFields },
    ],
  },
  restreams: {
    component: 'Restream',
    sections: [
      { title: 'Restream', fields: [{ key: 'restream_name', label: 'Name', schema: 'Restream.restream_name' }] },
      { title: 'Input', fields: inputFields() },
      { title: 'Output', fields: [
        { key: 'output.output_type', label: 'Output type', schema: 'Output.output_type', value: 'OUTPUT_TYPE_SRT_URL' },
        { key: 'output.output_stream_url', label: 'Output address', schema: 'Output.output_stream_url',
          placeholder: 'srt://receiver.example:9000?streamid=feed', help: 'Protocol options may follow as a query string.' },
        { key: 'output.output_stream_key', label: 'Stream key (RTMP)', schema: 'Output.output_stream_key',
          whenKey: 'output.output_type', when: ['OUTPUT_TYPE_LOCAL_RTMP_URL', 'OUTPUT_TYPE_OTHER_RTMP_URL'] },
      ] },
      { title: 'Transcoding', optional: 'transcoding', fields: transcodingFields },
    ],
  },
  recordings: {
    component: 'Recording',
    sections: [
      { title: 'Recording', fields: [
        { key: 'recording_name', label: 'Name', schema: 'Recording.recording_name' },
        { key: 'recording_type', label: 'Kind', schema: 'Recording.recording_type', value: 'RECORDING_STREAM_TO_FILE' },
        { key: 'output_format', label: 'File format', schema: 'Recording.output_format', value: 'mp4' },
        { key: 'memory_duration_sec', label: 'Memory kept (s)', schema: 'Recording.memory_duration_sec', placeholder: '300',
          whenKey: 'recording_type', when: ['RECORDING_STREAM_TO_MEMORY'] },
      ] },
      { title: 'Input', fields: inputFields() },
      { title: 'Transcoding', optional: 'transcoding', fields: transcodingFields },
    ],
  },
  'srt-servers': {
    component: 'SRTServer',
    sections: [
      { title: 'SRT server', fields: [
        { key: 'server_name', label: 'Name', schema: 'SRTServer.server_name' },
        { key: 'server_port', label: 'Port (UDP)', schema: 'SRTServer.server_port', value: 9000 },
        { key: 'server_latency', label: 'Latency (ms)', schema: 'SRTServer.server_latency', value: 200 },
        { key: 'server_passphrase', label: 'Passphrase (10–79 characters, optional)', schema: 'SRTServer.server_passphrase', widget: 'password' },
        { key: 'server_pbkeylen', label: 'Key length (bytes)', schema: 'SRTServer.server_pbkeylen' },
        { key: 'server_maxbw', label: 'Max bandwidth (bytes/s, -1 unlimited)', schema: 'SRTServer.server_maxbw', placeholder: '-1' },
        { key: 'server_timeout', label: 'Timeout (s)', schema: 'SRTServer.server_timeout' },
        { key: 'publisher_prefix', label: 'Publisher prefix', schema: 'SRTServer.publisher_prefix', placeholder: 'publisher' },
        { key: 'receiver_prefix', label: 'Receiver prefix', schema: 'SRTServer.receiver_prefix', placeholder: 'receiver' },
      ] },
    ],
  },
  'rtmp-servers': {
    component: 'RTMPServer',
    sections: [
      { title: 'RTMP server', fields: [
        { key: 'server_name', label: 'Name', schema: 'RTMPServer.server_name' },
        { key: 'server_port', label: 'Port (TCP)', schema: 'RTMPServer.server_port', value: 1935 },
        { key: 'server_publish_password', label: 'Publish password (optional)', schema: 'RTMPServer.server_publish_password',
          widget: 'password', clearable: true, help: '10 to 128 of A-Z a-z 0-9 . _ ~ -. Encoders add ?password=… to the stream key. Left empty on an edit, it stays as it was; tick Remove the password to clear it.' },
        { key: 'server_play_password', label: 'Play password (optional)', schema: 'RTMPServer.server_play_password',
          widget: 'password', clearable: true, help: 'The same for RTMP players. This server\'s own players, restreams and recordings need none.' },
      ] },
    ],
  },
};

// Option labels of the enums a person picks from; the API's value follows in the option.
export const ENUM_LABELS = {
  '': '(none)',
  INPUT_TYPE_SRT_SOFTWARE: 'SRT server module, software encoder',
  INPUT_TYPE_SRT_HARDWARE: 'SRT server module, hardware encoder',
  INPUT_TYPE_RTMP_SOFTWARE: 'RTMP server module, software encoder',
  INPUT_TYPE_RTMP_HARDWARE: 'RTMP server module, hardware encoder',
  INPUT_TYPE_SRT_LISTEN: 'SRT, listen on a port',
  INPUT_TYPE_RTMP_LISTEN: 'RTMP, listen on a port',
  INPUT_TYPE_RTSP_LISTEN: 'RTSP, listen on a port',
  INPUT_TYPE_UDP_LISTEN: 'UDP (MPEG-TS), listen on a port',
  INPUT_TYPE_HTTP_LISTEN: 'HTTP (MPEG-TS), listen on a port',
  INPUT_TYPE_SRT_URL: 'SRT, pull from an address',
  INPUT_TYPE_RTMP_URL: 'RTMP, pull from an address',
  INPUT_TYPE_RTSP_URL: 'RTSP, pull from an address',
  INPUT_TYPE_UDP_URL: 'UDP (MPEG-TS) address',
  INPUT_TYPE_HTTP_URL: 'HTTP (MPEG-TS) address',
  INPUT_TYPE_OTHER: 'Any ffmpeg address',
  INPUT_TYPE_HLS_URL: 'HLS, pull a playlist',
  INPUT_TYPE_MPEG_DASH_URL: 'MPEG-DASH, pull a manifest',
  INPUT_TYPE_GENERATE_TEST_VIDEO: 'Generated test stream',
  OUTPUT_TYPE_LOCAL_RTMP_URL: 'RTMP to this server\'s RTMP module',
  OUTPUT_TYPE_OTHER_RTMP_URL: 'RTMP to another server',
  OUTPUT_TYPE_RTSP_URL: 'RTSP (TCP)',
  OUTPUT_TYPE_SRT_URL: 'SRT',
  OUTPUT_TYPE_UDP_URL: 'UDP (MPEG-TS)',
  OUTPUT_TYPE_HTTP_URL: 'HTTP (MPEG-TS, chunked POST)',
  OUTPUT_TYPE_RTP_URL: 'RTP (MPEG-TS)',
  RECORDING_STREAM_TO_FILE: 'Files on disk',
  RECORDING_STREAM_TO_MEMORY: 'Memory (the last minutes)',
};
