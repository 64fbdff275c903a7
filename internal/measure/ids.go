package measure

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"hash/fnv"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/store"
)

// SeedOf derives a run-order seed from the parts that name a measurement
// (a purpose, a job key, commits): the 64-bit FNV-1a hash of the parts,
// each followed by a zero byte. The same measurement gets the same order,
// different ones differ. It is perfbot's one seed function.
func SeedOf(parts ...string) int64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return int64(h.Sum64())
}

// newSession names one measurement: runs it takes with the same number
// are interleaved pairs.
func newSession() string {
	var b [8]byte
	_, _ = crand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// VariantID is how runs of a variant are keyed in the store: "" for the
// plain build, else the name and a hash of the variant's environment, so
// that editing a variant in the job file does not reuse runs of the old one.
func VariantID(v job.Variant) string {
	if v.Name == "" {
		return ""
	}
	return v.Name + "@" + v.Key()[:8]
}

// saveJob records what the job key means, so stored runs stay explainable.
func saveJob(ctx context.Context, st *store.Store, j *job.Job) error {
	spec, err := json.Marshal(j)
	if err != nil {
		return err
	}
	return st.PutJob(ctx, j.Key(), j.Name, spec)
}
