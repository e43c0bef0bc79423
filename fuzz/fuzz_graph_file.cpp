// GraphFile::fromText: format sniffing, indexing and loading every graph, as the GUI and CLI open files.
#include "FuzzSupport.h"

#include "io/GraphFile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace jointscope;
    OpenOptions options;
    options.autoSidecars = false; // never look beside a fuzz input on disk
    Expected<GraphFile> file = GraphFile::fromText(std::string(fuzz::asText(data, size)), "fuzz.input", options);
    if (!file) {
        fuzz::checkLocated(file.error(), "GraphFile::fromText");
        return 0;
    }
    for (size_t i = 0; i < file->graphs().size(); ++i) {
        Expected<Graph> graph = file->load(i);
        if (!graph)
            fuzz::checkLocated(graph.error(), "GraphFile::load");
    }
    return 0;
}
