// Session files (*.jointscope) on arbitrary bytes: parseSession refuses with a located diagnostic or gives a
// session that writes back and reads again as itself; readSession on the same bytes as a file never accepts
// a session whose graph is a session (itself, here); unknown-node pins are taken out in one pass.
#include "FuzzSupport.h"

#include "io/Session.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace jointscope;
    const std::string_view text = fuzz::asText(data, size);
    // Small limits, so that inputs the fuzzer can grow reach every limit's refusal.
    SessionLimits limits;
    limits.policies = 64;
    limits.shardingPins = 64;
    limits.meshDims = 4;
    limits.viewEntries = 8;
    limits.stringBytes = 256;
    Expected<SessionFile> session = parseSession(text, "fuzz.jointscope", limits);
    if (!session) {
        fuzz::checkLocated(session.error(), "parseSession");
        return 0;
    }
    if (session->policies.size() > limits.policies || session->view.size() > limits.viewEntries)
        std::abort();
    Expected<SessionFile> again = parseSession(writeSession(*session), "again.jointscope", limits);
    if (!again || !(*again == *session)) {
        std::fprintf(stderr, "a session does not read back as itself: %s\n",
                     again ? "different" : again.error().format().c_str());
        std::abort();
    }

    // The same bytes as a file: graph.path "self.jointscope" (or anything that resolves to this file) names
    // a session, which readSession refuses.
    static const std::string dir = [] {
        const std::string d = "/tmp/fuzz-session-" + std::to_string(getpid());
        std::filesystem::create_directories(d);
        return d;
    }();
    const std::string path = dir + "/self.jointscope";
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(text.data(), static_cast<std::streamsize>(text.size()));
    }
    Expected<SessionFile> read = readSession(path, limits);
    if (read && isSessionFile(sessionGraphFile(*read, path))) {
        std::fprintf(stderr, "readSession accepted a session whose graph is a session\n");
        std::abort();
    }
    if (!read)
        fuzz::checkLocated(read.error(), "readSession");

    UnknownNodes unknown;
    takeUnknownNodes(
        session->policies, [](const std::string& name) { return name.size() % 2 == 0; }, unknown);
    for (const auto& [name, policy] : session->policies)
        if (name.size() % 2 != 0)
            std::abort();
    if (unknown.examples.size() > 5 || unknown.examples.size() > unknown.count)
        std::abort();
    return 0;
}
