// Package doc holds perfbot's JSON documents: the Go types that the
// report writers encode and that every reader (the dashboard, stored
// findings, tests) decodes, so that writer and reader share one model.
// Their field names are the documented contract (docs/json.md, a JSON
// Schema per document under docs/schema/); each document carries a
// top-level version that changes when a name or a shape does.
//
// It imports nothing of perfbot but the verdict vocabulary, so that any
// layer can read a document without the pipelines that write it.
package doc

import (
	"encoding/json"
	"math"
)

// The version of each document, its top-level "version".
const (
	// CompareVersion 2: one shape whether or not the job has a params
	// matrix (tables[], one per atomic job).
	CompareVersion = 2
	// TriageVersion 2: "version" added, suspects' fields in snake_case.
	TriageVersion      = 2
	BisectVersion      = 2
	LayoutVersion      = 1
	HistoryVersion     = 1
	SensitivityVersion = 1
	FindingsVersion    = 1
	SrcPatchVersion    = 1
)

// Num is a number that encodes NaN and ±Inf as null (JSON has neither).
type Num float64

// MarshalJSON writes x, or null when it is not finite.
func (x Num) MarshalJSON() ([]byte, error) {
	if !Finite(float64(x)) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(x))
}

// PNum is x as a *Num.
func PNum(x float64) *Num {
	n := Num(x)
	return &n
}

// Float is x, or nil (JSON null) when not finite.
func Float(x float64) *float64 {
	if !Finite(x) {
		return nil
	}
	return &x
}

// Finite is false for NaN and infinities.
func Finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// FiniteValues is xs without NaN and infinities, never nil.
func FiniteValues(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if Finite(x) {
			out = append(out, x)
		}
	}
	return out
}
