package storage_test

import (
	"github.com/sluicemedia/sluice/api"
	"github.com/sluicemedia/sluice/storage"
)

// *storage.Store must satisfy the store the API declares.
var _ api.Store = (*storage.Store)(nil)
