package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// PortClaims returns every port held by an entity of the service, ordered by port, then transport.
func (s *Store) PortClaims(ctx context.Context) ([]PortClaim, error) {
	rows, err := s.read().QueryContext(ctx, `SELECT `+claimColumns+` FROM port_claims ORDER BY port, transport`)
	if err != nil {
		return nil, fmt.Errorf("storage: list port claims: %w", err)
	}
	defer rows.Close()
	var claims []PortClaim
	for rows.Next() {
		c, err := scanClaim(rows)
		if err != nil {
			return nil, err
		}
		claims = append(claims, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("storage: list port claims: %w", err)
	}
	return claims, nil
}

// PortHolder returns the claim on k, and false when nobody holds it. The transport may be given in
// any case.
func (s *Store) PortHolder(ctx context.Context, k PortKey) (PortClaim, bool, error) {
	return portHolder(ctx, s.read(), normalizeKey(k))
}

// ReplaceClaims makes keys the exact set of ports held by the entity (module, entityID) and records
// entityName on all of them; keys it already holds keep their claim and created date. The API uses it
// to claim its own port as ModuleAPI at each start. A key held by another entity, or named twice,
// fails with a *PortTakenError and changes nothing.
func (s *Store) ReplaceClaims(ctx context.Context, module Module, entityID, entityName string, keys []PortKey) error {
	return s.write(ctx, func(tx dbq) error {
		return replaceClaims(ctx, tx, module, entityID, entityName, keys)
	})
}

// claimColumns are the columns scanClaim reads, in order.
const claimColumns = `id, port, transport, module, entity_id, entity_name, created`

// rowScanner is a *sql.Row or *sql.Rows.
type rowScanner interface{ Scan(dest ...any) error }

// scanClaim reads one port_claims row selected with claimColumns.
func scanClaim(row rowScanner) (PortClaim, error) {
	var c PortClaim
	var created string
	if err := row.Scan(&c.ID, &c.Port, &c.Transport, &c.Module, &c.EntityID, &c.EntityName, &created); err != nil {
		return PortClaim{}, err
	}
	var err error
	c.Created, err = parseTime(created)
	return c, err
}

// portHolder reads the claim on k (already normalised) through q.
func portHolder(ctx context.Context, q dbq, k PortKey) (PortClaim, bool, error) {
	c, err := scanClaim(q.QueryRowContext(ctx,
		`SELECT `+claimColumns+` FROM port_claims WHERE port = ? AND transport = ?`, k.Port, k.Transport))
	if errors.Is(err, sql.ErrNoRows) {
		return PortClaim{}, false, nil
	}
	if err != nil {
		return PortClaim{}, false, fmt.Errorf("storage: read claim on %d/%s: %w", k.Port, k.Transport, err)
	}
	return c, true, nil
}

// normalizeKey upper-cases the transport, the form claims are stored in.
func normalizeKey(k PortKey) PortKey {
	k.Transport = strings.ToUpper(strings.TrimSpace(k.Transport))
	return k
}

// replaceClaims is ReplaceClaims inside tx. The database's UNIQUE (port, transport) decides
// conflicts (an insert that conflicts inserts nothing); the holder is read afterwards only to say
// who is in the way.
func replaceClaims(ctx context.Context, tx dbq, m Module, entityID, entityName string, keys []PortKey) error {
	want := make([]PortKey, 0, len(keys))
	seen := make(map[PortKey]bool, len(keys))
	for _, k := range keys {
		k = normalizeKey(k)
		if k.Port < 1 || k.Port > 65535 || (k.Transport != TCP && k.Transport != UDP) {
			return fmt.Errorf("storage: %s %q: invalid port %d/%s", m, entityName, k.Port, k.Transport)
		}
		if seen[k] {
			return &PortTakenError{Key: k, Holder: PortClaim{
				Port: k.Port, Transport: k.Transport, Module: m, EntityID: entityID, EntityName: entityName,
			}}
		}
		seen[k] = true
		want = append(want, k)
	}

	held, err := entityClaims(ctx, tx, m, entityID)
	if err != nil {
		return err
	}
	// Free what the entity no longer wants first, so that it can move a key between its own roles.
	for k, id := range held {
		if !seen[k] {
			if _, err := tx.ExecContext(ctx, `DELETE FROM port_claims WHERE id = ?`, id); err != nil {
				return fmt.Errorf("storage: free port %d/%s: %w", k.Port, k.Transport, err)
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE port_claims SET entity_name = ? WHERE module = ? AND entity_id = ?`,
		entityName, string(m), entityID); err != nil {
		return fmt.Errorf("storage: rename claims of %s %q: %w", m, entityName, err)
	}
	created := formatTime(now())
	for _, k := range want {
		if _, ok := held[k]; ok {
			continue
		}
		// ON CONFLICT DO NOTHING rather than a failed insert: on PostgreSQL a failed statement
		// ends the transaction, and the holder is read in it afterwards.
		res, err := tx.ExecContext(ctx, `INSERT INTO port_claims (`+claimColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (port, transport) DO NOTHING`,
			NewID(), k.Port, k.Transport, string(m), entityID, entityName, created)
		if err != nil {
			return fmt.Errorf("storage: claim port %d/%s for %s %q: %w", k.Port, k.Transport, m, entityName, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("storage: claim port %d/%s for %s %q: %w", k.Port, k.Transport, m, entityName, err)
		} else if n == 0 {
			holder, ok, herr := portHolder(ctx, tx, k)
			if herr != nil {
				return herr
			}
			if !ok { // cannot happen inside the transaction; say what we know
				holder = PortClaim{ID: "?", Port: k.Port, Transport: k.Transport}
			}
			return &PortTakenError{Key: k, Holder: holder}
		}
	}
	return nil
}

// entityClaims returns the keys an entity holds, with their claim ids.
func entityClaims(ctx context.Context, tx dbq, m Module, entityID string) (map[PortKey]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, port, transport FROM port_claims WHERE module = ? AND entity_id = ?`,
		string(m), entityID)
	if err != nil {
		return nil, fmt.Errorf("storage: read claims of %s %q: %w", m, entityID, err)
	}
	defer rows.Close()
	held := make(map[PortKey]string)
	for rows.Next() {
		var id string
		var k PortKey
		if err := rows.Scan(&id, &k.Port, &k.Transport); err != nil {
			return nil, fmt.Errorf("storage: read claims of %s %q: %w", m, entityID, err)
		}
		held[k] = id
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("storage: read claims of %s %q: %w", m, entityID, err)
	}
	return held, nil
}
