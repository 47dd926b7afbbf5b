package tpch

import "strings"

// The comment columns are text from the specification's grammar (clause
// 4.2.2.10 and 4.2.2.13): sentences of noun, verb and prepositional
// phrases. As the specification describes, the generator first writes a
// pool of such sentences and then takes each comment as a substring of the
// pool at a random offset, of a random length in the column's range. The
// pool here is textPoolBytes long (the specification's is 300 MB): large
// enough that comments rarely repeat at the scales numalab loads, small
// enough to build in milliseconds.
const textPoolBytes = 4 << 20

// weighted is a word list with weights: a word's chance is its weight over
// the sum.
type weighted struct {
	words []string
	cum   []int64 // cumulative weights
}

func newWeighted(pairs ...any) weighted {
	var w weighted
	var sum int64
	for i := 0; i < len(pairs); i += 2 {
		sum += int64(pairs[i+1].(int))
		w.words = append(w.words, pairs[i].(string))
		w.cum = append(w.cum, sum)
	}
	return w
}

// uniform is a word list of equal weights.
func uniform(words ...string) weighted {
	var w weighted
	for i, s := range words {
		w.words = append(w.words, s)
		w.cum = append(w.cum, int64(i+1))
	}
	return w
}

func (w weighted) pick(r *rng) string {
	x := r.between(1, w.cum[len(w.cum)-1])
	lo, hi := 0, len(w.cum)-1
	for lo < hi {
		m := (lo + hi) / 2
		if w.cum[m] >= x {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return w.words[lo]
}

// The grammar's word lists. The leading words of the nouns, verbs,
// adjectives and adverbs are the frequent ones (packages, requests,
// accounts, deposits; special, pending, unusual, express; ...): Q13's
// '%special%requests%' depends on it.
var (
	nouns = newWeighted(
		"packages", 40, "requests", 40, "accounts", 40, "deposits", 40,
		"foxes", 20, "ideas", 20, "theodolites", 20, "pinto beans", 20, "instructions", 20,
		"dependencies", 10, "excuses", 10, "platelets", 10, "asymptotes", 10,
		"courts", 5, "dolphins", 5, "multipliers", 1, "sauternes", 1, "warthogs", 1,
		"frets", 1, "dinos", 1, "attainments", 1, "somas", 1, "Tiresias", 1, "patterns", 1,
		"forges", 1, "braids", 1, "hockey players", 1, "frays", 1, "warhorses", 1,
		"dugouts", 1, "notornis", 1, "epitaphs", 1, "pearls", 1, "tithes", 1, "waters", 1,
		"orbits", 1, "gifts", 1, "sheaves", 1, "depths", 1, "sentiments", 1, "decoys", 1,
		"realms", 1, "pains", 1, "grouches", 1, "escapades", 1)
	verbs = newWeighted(
		"sleep", 20, "wake", 20, "are", 20, "cajole", 20, "haggle", 20, "nag", 10,
		"use", 10, "boost", 10, "affix", 5, "detect", 5, "integrate", 5, "maintain", 1,
		"nod", 1, "was", 1, "lose", 1, "sublate", 1, "solve", 1, "thrash", 1, "promise", 1,
		"engage", 1, "hinder", 1, "print", 1, "x-ray", 1, "breach", 1, "eat", 1, "grow", 1,
		"impress", 1, "mold", 1, "poach", 1, "serve", 1, "run", 1, "dazzle", 1, "snooze", 1,
		"doze", 1, "unwind", 1, "kindle", 1, "play", 1, "hang", 1, "believe", 1, "doubt", 1)
	adjectives = newWeighted(
		"special", 20, "pending", 20, "unusual", 20, "express", 20, "furious", 1, "sly", 1,
		"careful", 1, "blithe", 1, "quick", 1, "fluffy", 1, "slow", 1, "quiet", 1,
		"ruthless", 1, "thin", 1, "close", 1, "dogged", 1, "daring", 1, "brave", 1,
		"stealthy", 1, "permanent", 1, "enticing", 1, "idle", 1, "busy", 1, "regular", 50,
		"final", 40, "ironic", 40, "even", 30, "bold", 20, "silent", 10)
	adverbs = newWeighted(
		"sometimes", 1, "always", 1, "never", 1, "furiously", 50, "slyly", 50,
		"carefully", 50, "blithely", 40, "quickly", 30, "fluffily", 20, "slowly", 1,
		"quietly", 1, "ruthlessly", 1, "thinly", 1, "closely", 1, "doggedly", 1,
		"daringly", 1, "bravely", 1, "stealthily", 1, "permanently", 1, "enticingly", 1,
		"idly", 1, "busily", 1, "regularly", 1, "finally", 1, "ironically", 1, "evenly", 1,
		"boldly", 1, "silently", 1)
	prepositions = uniform("about", "above", "according to", "across", "after", "against",
		"along", "alongside of", "among", "around", "at", "atop", "before", "behind",
		"beneath", "beside", "besides", "between", "beyond", "by", "despite", "during",
		"except", "for", "from", "in place of", "inside", "instead of", "into", "near", "of",
		"on", "outside", "over", "past", "since", "through", "throughout", "to", "toward",
		"under", "until", "up", "upon", "without", "with", "within")
	auxiliaries = uniform("do", "may", "might", "shall", "will", "would", "can", "could",
		"should", "ought to", "must", "will have to", "shall have to", "could have to",
		"should have to", "must have to", "need to", "try to")
	terminators = newWeighted(".", 50, ";", 1, ":", 1, "?", 1, "!", 1, "--", 1)
)

// The grammar's sentence, noun phrase and verb phrase forms (clause
// 4.2.2.13; the weights are numalab's approximation): N noun phrase, V verb phrase, P prepositional phrase, T
// terminator; J adjective, D adverb, X auxiliary, n noun, v verb, ','
// a comma after the previous word.
var (
	sentenceForms = newWeighted("NVT", 3, "NVPT", 3, "NVNT", 3, "NPVNT", 1, "NPVPT", 1)
	nounForms     = newWeighted("n", 10, "Jn", 20, "J,Jn", 10, "DJn", 6)
	verbForms     = newWeighted("v", 30, "Xv", 1, "vD", 40, "XvD", 1)
)

// nounWords and verbWords are the words of a noun and a verb phrase's
// form letters.
var (
	nounWords = map[rune]weighted{'n': nouns, 'J': adjectives, 'D': adverbs}
	verbWords = map[rune]weighted{'v': verbs, 'X': auxiliaries, 'D': adverbs}
)

// textPool writes sentences from r until the pool holds n bytes.
func textPool(r *rng, n int) string {
	var b strings.Builder
	b.Grow(n + 200)
	for b.Len() < n {
		for _, c := range sentenceForms.pick(r) {
			switch c {
			case 'N':
				phrase(&b, r, nounForms, nounWords)
			case 'V':
				phrase(&b, r, verbForms, verbWords)
			case 'P':
				word(&b, prepositions.pick(r))
				word(&b, "the")
				phrase(&b, r, nounForms, nounWords)
			case 'T':
				b.WriteString(terminators.pick(r))
			}
		}
	}
	return b.String()[:n]
}

// word writes s after a space (none at the pool's start).
func word(b *strings.Builder, s string) {
	if b.Len() > 0 {
		b.WriteByte(' ')
	}
	b.WriteString(s)
}

// phrase writes a phrase of one of forms, each letter a word of its list
// in words, a comma after the previous word.
func phrase(b *strings.Builder, r *rng, forms weighted, words map[rune]weighted) {
	for _, c := range forms.pick(r) {
		if c == ',' {
			b.WriteByte(',')
			continue
		}
		word(b, words[c].pick(r))
	}
}

// text returns a comment of a random length in [lo, hi] from pool.
func text(r *rng, pool string, lo, hi int64) string {
	n := r.between(lo, hi)
	off := r.between(0, int64(len(pool))-n)
	return pool[off : off+n]
}
