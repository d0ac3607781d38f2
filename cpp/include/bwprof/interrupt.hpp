// Stopping a long call when the user asks (Ctrl-C). The core knows nothing of signals or of
// Python: a host program installs a check that throws when a stop was asked for (the Python module
// installs one that runs the interpreter's signal handlers, so a pending KeyboardInterrupt comes
// back as that exception), and the runner and the peaks policy call check_interrupt() between
// launches. A measurement therefore stops within one launch of the request.
#pragma once
#include <functional>

namespace bwprof {

// Installs the check (an empty function removes it). Called from any thread, it must be cheap
// enough to run every few milliseconds and throw to stop the call in progress.
void set_interrupt_check(std::function<void()> check);

// Runs the installed check, at most once every 20 ms (later calls within that time return at
// once); its exception propagates to the caller of the long call.
void check_interrupt();

}  // namespace bwprof
