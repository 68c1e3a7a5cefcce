package wire

// TextCallOpen opens a tool call written as text (seed 002's syntax,
// `<invoke name="TOOL">…</invoke>`), for upstreams that only read and write
// text. The answer parser (filters/stream) reads a call only where this
// text appears; text-only shaping (filters/shape) writes it only for the
// model's own earlier calls and in the tool instructions, and shows it in
// any other form inside tool results and user text, so that a model quoting
// a result never makes a call the result asked for (review round 3, U4).
const TextCallOpen = `<invoke name="`
