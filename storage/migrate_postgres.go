package storage

// pgMigrations are the PostgreSQL schema steps, version for version the same as migrations (the
// SQLite ones): a step added there is added here under the same number. The differences: text
// columns compare byte by byte (COLLATE "C", as SQLite's BINARY, so that id and time order stay
// text order whatever the database's locale); the case-blind unique user name is a unique index
// on the ASCII-folded name (SQLite's NOCASE); event ids are BIGINT, and the highest ever stored
// is kept by a trigger (SQLite's AUTOINCREMENT keeps it in sqlite_sequence); sluice_number is a
// SQL function (SQLite's is registered from Go). Documents stay text, their bytes as written.
var pgMigrations = []string{
	// 1: the initial schema.
	`
CREATE TABLE records (
	id       TEXT COLLATE "C" PRIMARY KEY,
	module   TEXT COLLATE "C" NOT NULL,
	name     TEXT COLLATE "C" NOT NULL,
	active   INTEGER NOT NULL DEFAULT 0,
	created  TEXT COLLATE "C" NOT NULL,
	modified TEXT COLLATE "C" NOT NULL,
	doc      TEXT NOT NULL,
	UNIQUE (module, name)
);
CREATE INDEX records_module_created ON records (module, created, id);
CREATE INDEX records_active ON records (active, created, id);

CREATE TABLE port_claims (
	id          TEXT COLLATE "C" PRIMARY KEY,
	port        INTEGER NOT NULL CHECK (port BETWEEN 1 AND 65535),
	transport   TEXT COLLATE "C" NOT NULL CHECK (transport IN ('TCP', 'UDP')),
	module      TEXT COLLATE "C" NOT NULL,
	entity_id   TEXT COLLATE "C" NOT NULL,
	entity_name TEXT COLLATE "C" NOT NULL,
	created     TEXT COLLATE "C" NOT NULL,
	UNIQUE (port, transport)
);
CREATE INDEX port_claims_entity ON port_claims (module, entity_id);

CREATE TABLE recorded_files (
	id        TEXT COLLATE "C" PRIMARY KEY,
	record_id TEXT COLLATE "C" NOT NULL REFERENCES records (id) ON DELETE CASCADE,
	created   TEXT COLLATE "C" NOT NULL,
	state     TEXT COLLATE "C" NOT NULL,
	doc       TEXT NOT NULL
);
CREATE INDEX recorded_files_record ON recorded_files (record_id, created, id);
CREATE INDEX recorded_files_state ON recorded_files (state, created, id);

CREATE TABLE users (
	id            TEXT COLLATE "C" PRIMARY KEY,
	name          TEXT COLLATE "C" NOT NULL,
	password_hash TEXT NOT NULL,
	created       TEXT COLLATE "C" NOT NULL
);
CREATE UNIQUE INDEX users_name_nocase ON users
	(translate(name, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'));

CREATE TABLE settings (
	key   TEXT COLLATE "C" PRIMARY KEY,
	value TEXT NOT NULL
);

CREATE TABLE revoked_tokens (
	jti TEXT COLLATE "C" PRIMARY KEY,
	exp TEXT COLLATE "C" NOT NULL
);
CREATE INDEX revoked_tokens_exp ON revoked_tokens (exp);

-- sluice_number reads text holding a JSON number (ASCII white space around it allowed) as its
-- value, and anything else, or a value out of range, as NULL: storage.NumberText in SQL.
CREATE FUNCTION sluice_number(t text) RETURNS double precision
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
	t := btrim(t, E' \t\n\r\f\v');
	IF t !~ '^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$' THEN
		RETURN NULL;
	END IF;
	RETURN t::double precision;
EXCEPTION WHEN numeric_value_out_of_range THEN
	RETURN NULL;
END
$$;
`,
	// 2: the event history (issue 14) and the webhooks' outbox. events_last_id keeps the highest
	// event id ever stored, so event ids grow across restarts even once every event was pruned.
	`
CREATE TABLE events (
	id        BIGINT PRIMARY KEY,
	type      TEXT COLLATE "C" NOT NULL,
	time      TEXT COLLATE "C" NOT NULL,
	module    TEXT COLLATE "C" NOT NULL,
	record_id TEXT COLLATE "C" NOT NULL,
	doc       TEXT NOT NULL
);
CREATE INDEX events_time ON events (time);

CREATE TABLE events_last_id (
	one INTEGER PRIMARY KEY CHECK (one = 1),
	id  BIGINT NOT NULL
);
CREATE FUNCTION sluice_events_last_id() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO events_last_id (one, id) VALUES (1, NEW.id)
	ON CONFLICT (one) DO UPDATE SET id = GREATEST(events_last_id.id, EXCLUDED.id);
	RETURN NEW;
END
$$;
CREATE TRIGGER events_last_id AFTER INSERT ON events
	FOR EACH ROW EXECUTE FUNCTION sluice_events_last_id();

CREATE TABLE webhook_deliveries (
	id           TEXT COLLATE "C" PRIMARY KEY,
	webhook_id   TEXT COLLATE "C" NOT NULL REFERENCES records (id) ON DELETE CASCADE,
	event_id     BIGINT NOT NULL,
	type         TEXT COLLATE "C" NOT NULL,
	body         TEXT NOT NULL,
	state        TEXT COLLATE "C" NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
	attempts     INTEGER NOT NULL DEFAULT 0,
	created      TEXT COLLATE "C" NOT NULL,
	next_at      TEXT COLLATE "C" NOT NULL,
	last_attempt TEXT COLLATE "C" NOT NULL DEFAULT '',
	last_error   TEXT NOT NULL DEFAULT ''
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_at);
CREATE INDEX webhook_deliveries_hook ON webhook_deliveries (webhook_id, state, last_attempt);
`,
	// 3: nodes and leases (issue 17), for several sluice nodes on one database; internal/cluster
	// reads and writes them. Times are the database's (timestamptz, now()), so node clocks do not
	// matter. A lease row stays once made (a release empties node_id and ends expires), so its
	// generation only grows over the record's life: (record_id, generation) names one tenure.
	`
CREATE TABLE nodes (
	id         TEXT COLLATE "C" PRIMARY KEY,
	api_url    TEXT NOT NULL,
	public_url TEXT NOT NULL,
	capacity   JSONB NOT NULL DEFAULT '{}',
	started    TIMESTAMPTZ NOT NULL,
	heartbeat  TIMESTAMPTZ NOT NULL,
	draining   BOOLEAN NOT NULL DEFAULT false
);

CREATE TABLE leases (
	record_id  TEXT COLLATE "C" PRIMARY KEY REFERENCES records (id) ON DELETE CASCADE,
	node_id    TEXT COLLATE "C" REFERENCES nodes (id) ON DELETE SET NULL,
	generation BIGINT NOT NULL CHECK (generation > 0),
	expires    TIMESTAMPTZ NOT NULL
);
CREATE INDEX leases_node ON leases (node_id, expires);
`,
	// 4: the owner's process state, on its lease (issue 17, the wiring): any node's API shows
	// what the owner runs. Written by the holder of the lease's generation only; state_since is
	// the owner's clock (it shows when the owner saw the state change).
	`
ALTER TABLE leases ADD COLUMN state TEXT NOT NULL DEFAULT '',
	ADD COLUMN state_since TIMESTAMPTZ,
	ADD COLUMN last_error TEXT NOT NULL DEFAULT '',
	ADD COLUMN restarts INTEGER NOT NULL DEFAULT 0;
`,
	// 5: the node whose disk holds a recorded file (issue 17, downloads through any node):
	// a recording may move between nodes, and its files stay where they were written.
	`
ALTER TABLE recorded_files ADD COLUMN node TEXT COLLATE "C" NOT NULL DEFAULT '';
`,
	// 6: the removals of recorded files that another node holds, queued for that node
	// (DeleteFile through a node other than the holder). No foreign key: the bytes go even when
	// the recording is removed meanwhile, and the holder may be away (down, or left) for long.
	`
CREATE TABLE file_removals (
	file_id   TEXT COLLATE "C" PRIMARY KEY,
	node      TEXT COLLATE "C" NOT NULL,
	record_id TEXT COLLATE "C" NOT NULL,
	queued    TEXT COLLATE "C" NOT NULL,
	doc       TEXT NOT NULL
);
CREATE INDEX file_removals_node ON file_removals (node, queued, file_id);
`,
}
