// json_scan, the index's fast scan of record lines, against nlohmann on arbitrary bytes: what it accepts,
// nlohmann accepts with the same events (keys and strings decoded alike, numbers read alike).
#include "FuzzSupport.h"
#include "JsonScanEvents.h"

#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace jointscope::json_scan_events;
    const Outcome outcome = compare(jointscope::fuzz::asText(data, size));
    if (outcome.fastAccepted && !(outcome.fullAccepted && outcome.sameEvents)) {
        std::fprintf(stderr, "json_scan accepted what nlohmann %s\n",
                     outcome.fullAccepted ? "reads with other events" : "rejects");
        std::abort();
    }
    return 0;
}
