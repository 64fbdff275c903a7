package stats

// DefaultEffectPct is perfbot's smallest change that counts, in percent,
// wherever a command takes --effect (compare, triage, bisect, watch): a
// smaller change, however significant, is "no change". Every pipeline's
// default refers to this one figure.
const DefaultEffectPct = 5.0
