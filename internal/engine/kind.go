package engine

import "github.com/numalab/numalab/internal/result"

// KindInfo is the stored item kind of an engine's Info, stored with every
// run that measured the engine.
const KindInfo result.Kind[Info] = "engine.Info"
