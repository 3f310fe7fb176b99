// How much lower than the event loop Signet's worker threads run (added to their nice value).
// The event loop answers the cheap reviews (a scale-down, a status update) that must never wait;
// the workers (CUE, Rego and CEL evaluation, policy validation, large-body checks) do work that
// any caller of the admission port can make costly. With both wanting a core, the scheduler gives
// a thread at nice 10 about a tenth of what one at 0 gets, so a busy worker delays the event loop
// little, while an idle event loop leaves the workers the whole machine.
export const WORKER_NICENESS = 10;
