package api

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/sluicemedia/sluice/storage"
)

// Store is what the API needs of the record store; *storage.Store satisfies it.
type Store interface {
	Create(ctx context.Context, r storage.Record) error
	Update(ctx context.Context, r storage.Record) error
	Get(ctx context.Context, m storage.Module, id string, into storage.Record) error
	Delete(ctx context.Context, m storage.Module, id string) error
	SetActive(ctx context.Context, m storage.Module, id string, active bool, at time.Time) error
	// ListDocs returns the stored JSON documents of a module, oldest first.
	ListDocs(ctx context.Context, m storage.Module) ([][]byte, error)
	// ListPage returns the documents of a module q selects, in q's order, paged.
	ListPage(ctx context.Context, m storage.Module, q storage.ListQuery) ([][]byte, error)
	// Count returns how many documents of a module filter selects.
	Count(ctx context.Context, m storage.Module, filter []storage.Match) (int, error)
	PortClaims(ctx context.Context) ([]storage.PortClaim, error)

	Files(ctx context.Context, recordID string) ([]storage.RecordedFile, error)
	File(ctx context.Context, id string) (storage.RecordedFile, error)
	DeleteFile(ctx context.Context, id string) error

	CreateUser(ctx context.Context, u storage.User) error
	UserByName(ctx context.Context, name string) (storage.User, error)
	UserByID(ctx context.Context, id string) (storage.User, error)
	SetPasswordHash(ctx context.Context, userID, hash string) error
	Setting(ctx context.Context, key string) (string, bool, error)
	SetSetting(ctx context.Context, key, value string) error
	// SettingOrInit returns the setting, storing init() first when it is absent (atomically).
	SettingOrInit(ctx context.Context, key string, init func() (string, error)) (string, error)
	RevokeToken(ctx context.Context, jti string, exp time.Time) error
	// RevokeUserTokens refuses the user's tokens issued until at (or a later time stored
	// before, which it returns).
	RevokeUserTokens(ctx context.Context, userID string, at time.Time) (time.Time, error)
	// TokensNotBefore is the user's token "not before" (zero when none).
	TokensNotBefore(ctx context.Context, userID string) (time.Time, error)
	// AuthRevision counts the revocation changes; it must be cheap, read at most once a
	// request and usually much less (see revocations).
	AuthRevision(ctx context.Context) (int64, error)
	// Revocations reads the revocation state (tokens expiring at or after since).
	Revocations(ctx context.Context, since time.Time) (storage.Revocations, error)
	// RevocationStamp changes when a revocation is committed to the store, by any process;
	// false when it cannot tell.
	RevocationStamp() (storage.Stamp, bool)
}

// Status is the running state of a process or server module (API.md "Records").
type Status struct {
	State     string    // stopped, starting, waiting, running, reconnecting, failed
	Since     time.Time // when State was entered
	LastError string
	Restarts  int
}

// Stat is the live statistic of a process (API.md "Statistics").
type Stat struct {
	Bitrate   float64 // kbit/s, averaged over the last 2 s
	FPS       float64
	BytesIn   int64
	UptimeSec float64
	// Discontinuities counts the times the input came back after a gap.
	Discontinuities int64
	// SRT holds the link statistics of the process's SRT connections now (its input, its
	// output); empty for other protocols.
	SRT []SRTLink
}

// ActiveStream is a stream published to a server module now (getActiveStreams).
type ActiveStream struct {
	StreamID      string    `json:"stream_id"`
	Publisher     string    `json:"publisher"` // remote address
	Since         time.Time `json:"since"`
	Bitrate       float64   `json:"bitrate"` // kbit/s
	Readers       int       `json:"readers"`
	RTTMs         *float64  `json:"rtt_ms,omitempty"`        // SRT only
	PacketsLost   *int64    `json:"packets_lost,omitempty"`  // SRT only
	Retransmitted *int64    `json:"retransmitted,omitempty"` // SRT only
	SRT           *SRTLink  `json:"-"`                       // SRT only: the publisher's link
}

// ErrUnsupported is wrapped by Processes.Check when the server cannot do what a valid record asks
// (answered 422 UNSUPPORTED with the error's message).
var ErrUnsupported = errors.New("unsupported")

// ErrNotAvailable is wrapped when a run-time dependency is missing (answered 503 UNAVAILABLE).
var ErrNotAvailable = errors.New("not available")

// Processes runs what the records describe. The API stores first, then asks Processes to act.
type Processes interface {
	// Check refuses, wrapping ErrUnsupported, a valid record this server cannot run.
	Check(ctx context.Context, r storage.Record) error
	// PortBusy tells whether another program has the port bound now.
	PortBusy(k storage.PortKey) bool
	// Lock waits for the lifecycle lock of one record (or until ctx ends) and returns its
	// release. The handlers that create, update, start, stop or remove a record hold it across
	// their store write and the process action; Start, Stop, Restart and Remove expect it held.
	Lock(ctx context.Context, m storage.Module, id string) (unlock func(), err error)
	Start(ctx context.Context, m storage.Module, id string) error
	Stop(ctx context.Context, m storage.Module, id string) error
	// Restart applies a stored update to a running process; a stopped one stays stopped.
	Restart(ctx context.Context, m storage.Module, id string) error
	// Remove stops the process and forgets it; called before the record is deleted.
	Remove(ctx context.Context, m storage.Module, id string) error
	Status(m storage.Module, id string) Status
	Stat(m storage.Module, id string) Stat
	ActiveStreams(ctx context.Context, m storage.Module, id string) ([]ActiveStream, error)

	// RemoveFile deletes a recorded file from disk (the API then deletes its entry). In a
	// cluster, for a file another node holds, it deletes the entry with the removal of the
	// bytes queued for the holder (the API's delete then finds no entry, which is fine).
	RemoveFile(ctx context.Context, f storage.RecordedFile) error
	// OpenFile opens a recorded file for download; the path is confined to the recordings folder.
	OpenFile(ctx context.Context, f storage.RecordedFile) (io.ReadSeekCloser, time.Time, error)
	// MemoryMP4 returns what a memory recording holds as one MP4.
	MemoryMP4(ctx context.Context, id string) (io.ReadSeeker, error)
}

// Utils serves the system utilities (spec 4.4).
type Utils interface {
	ServerStat(ctx context.Context) (any, error)
	SpeedTest(ctx context.Context) (any, error)
	ListeningPorts(ctx context.Context) ([]storage.PortKey, error)
}

// Config is what New needs.
type Config struct {
	Store Store
	Procs Processes
	Utils Utils
	// Playback serves /hls/... on the main port (public); nil answers 404.
	Playback http.Handler
	// Console serves the web console at / and its assets under /assets/ (public: the page
	// holds no data, the API calls it makes carry the token); nil answers 404.
	Console http.Handler
	// PublicHost is the host put in hls_url/dash_url; empty uses the request's host.
	PublicHost string
	// HTTPS says the player ports serve HTTPS (--tls-cert): hls_url and dash_url are https.
	HTTPS bool
	// TokenTTL is the lifetime of issued tokens; default 30 days.
	TokenTTL time.Duration
	// RevocationRecheck is the longest the in-memory token revocation state goes without
	// reading the store's auth revision, and so how late a revocation by another process
	// (`sluice passwd`) may take effect when the store's revocation stamp missed it; default
	// DefaultRevocationRecheck (1 s).
	RevocationRecheck time.Duration
	// LoginFailures failed or in-flight logins from one client address (an IPv6 /64) within
	// LoginWindow answer 429 until enough of them age out; default DefaultLoginFailures (5).
	LoginFailures int
	// LoginUserFailures is the same limit for one user name from any address; default
	// DefaultLoginUserFailures (20).
	LoginUserFailures int
	// LoginWindow is the sliding window of both limits; default DefaultLoginWindow (1 minute).
	LoginWindow time.Duration
	// LoginWorkers is how many password checks run at once; default DefaultLoginWorkers() (half
	// the CPUs, at least 1).
	LoginWorkers int
	// LoginQueue is how many password checks may wait for a worker; past it a login answers 503
	// with Retry-After at once. Default DefaultLoginQueuePerWorker per worker; negative: none.
	LoginQueue int
	// WriteWorkers is how many requests that change records run at once (the others wait,
	// parked, in arrival order); default DefaultWriteWorkers() (two a CPU, at least 4).
	WriteWorkers int
	// InputSchemes are the ffmpeg protocols an INPUT_TYPE_OTHER address may use; nil means
	// DefaultInputSchemes. Checked with CheckInputSchemes.
	InputSchemes []string
	// AllowLocalFiles lets an INPUT_TYPE_OTHER address be a path on the server or a file: URL.
	// Default false.
	AllowLocalFiles bool
	// URLChecks check the protocol options of input and output addresses by URL scheme
	// ("srt"), beyond what the API checks itself; listen is true for a listen input's address.
	// A check's error answers 400 VALIDATION on the address with its message.
	URLChecks map[string]func(rawurl string, listen bool) error
	// Metrics serves GET /metrics (the Prometheus exposition, with its own token check); nil
	// answers 404.
	Metrics http.Handler
	// Events serves GET /api/events (the Server-Sent Events stream) once the token is
	// checked; nil answers 404.
	Events http.Handler
	// Webhooks serves the webhooks module's delivery status and test; nil: no status, and
	// test answers 503.
	Webhooks Webhooks
	// Changes, when set, is told of every create, update, start, stop and remove.
	Changes Changes
	// Cluster, when set (a PostgreSQL store), adds each record's node and serves the nodes
	// routes; nil: a single node.
	Cluster Cluster
	// Observer, when set, is told of every request and failed login (for metrics).
	Observer Observer
	// Ready reports whether /healthz answers 200.
	Ready func() bool
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Logger receives the API's logs; default slog.Default().
	Logger *slog.Logger
}
