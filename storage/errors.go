package storage

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrNotFound is wrapped when a record, file, user or claim does not exist.
var ErrNotFound = errors.New("not found")

// ErrNameTaken is wrapped when a unique name (per module, or a user name) is already used.
var ErrNameTaken = errors.New("name already taken")

// ErrNodeRunning is wrapped when a cluster node asked to be retired still heartbeats.
var ErrNodeRunning = errors.New("node is running")

// ErrPortTaken is matched by every *PortTakenError (errors.Is).
var ErrPortTaken = errors.New("port already taken")

// PortTakenError tells which entity holds a port that another entity tried to claim.
type PortTakenError struct {
	// Key is the port and transport asked for.
	Key PortKey
	// Holder is the claim in the way. Its ID is empty when the claimant names the key twice itself
	// (e.g. vod_port 8000/TCP and an RTMP listen input on 8000/TCP).
	Holder PortClaim
}

// Error says which port is held and by whom, e.g. `port 8000/TCP is held by MODULE_VOD "lobby"`.
func (e *PortTakenError) Error() string {
	if e.Holder.ID == "" {
		return fmt.Sprintf("port %d/%s is claimed twice by %s %q",
			e.Key.Port, e.Key.Transport, e.Holder.Module, e.Holder.EntityName)
	}
	return fmt.Sprintf("port %d/%s is held by %s %q",
		e.Key.Port, e.Key.Transport, e.Holder.Module, e.Holder.EntityName)
}

// Is makes errors.Is(err, ErrPortTaken) true for a *PortTakenError.
func (e *PortTakenError) Is(target error) bool { return target == ErrPortTaken }

// sqliteCode returns the extended SQLite result code of err, or 0 when err is not a SQLite error.
func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()
	}
	return 0
}

// PostgreSQL's SQLSTATE codes of the constraint failures the store maps.
const (
	pgUniqueViolation     = "23505"
	pgForeignKeyViolation = "23503"
)

// pgError returns err's SQLSTATE and the name of the constraint it is about, or "" when err is
// not a PostgreSQL error.
func pgError(err error) (code, constraint string) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code, pe.ConstraintName
	}
	return "", ""
}

// isUniqueViolation tells whether err is a UNIQUE constraint failure (not the primary key).
func isUniqueViolation(err error) bool {
	if code, constraint := pgError(err); code != "" {
		return code == pgUniqueViolation && !isPrimaryKeyName(constraint)
	}
	return sqliteCode(err) == sqlite3.SQLITE_CONSTRAINT_UNIQUE
}

// isPrimaryKeyViolation tells whether err is a PRIMARY KEY constraint failure.
func isPrimaryKeyViolation(err error) bool {
	if code, constraint := pgError(err); code != "" {
		return code == pgUniqueViolation && isPrimaryKeyName(constraint)
	}
	return sqliteCode(err) == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

// isPrimaryKeyName tells whether a PostgreSQL constraint is a primary key: PostgreSQL names
// them <table>_pkey, and the migrations name none otherwise.
func isPrimaryKeyName(constraint string) bool { return strings.HasSuffix(constraint, "_pkey") }

// isForeignKeyViolation tells whether err is a FOREIGN KEY constraint failure.
func isForeignKeyViolation(err error) bool {
	if code, _ := pgError(err); code != "" {
		return code == pgForeignKeyViolation
	}
	return sqliteCode(err) == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
}

// ErrNoSpace is matched (errors.Is) by a write the store could not make because its file system
// is full, a disk quota is used up or the process's file-size limit is reached. See NoSpaceError.
var ErrNoSpace = errors.New("no space left for the store")
