package tooling

// RecordedFile is an entry of a recording's recordedFiles as the API answers it (API.md
// "Recording files"): what the soak's client and the tests' (testutil.API) decode.
type RecordedFile struct {
	ID       string  `json:"id"`
	Name     string  `json:"name"`
	Path     string  `json:"path"`
	Format   string  `json:"format"`
	Size     int64   `json:"size"`
	Duration float64 `json:"duration"`
	Ended    *string `json:"ended"` // null while the file is written
	State    string  `json:"state"`
}
