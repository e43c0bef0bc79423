// jointscope-cli split-dw: a backward graph split into its dI and dW graphs for pipeline schedules.
#include "Command.h"

#include "io/FxWriter.h"
#include "io/JsonFormat.h"
#include "partition/SplitDw.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace jointscope::cli {
namespace {

int runSplitDw(const ParsedArgs& args) {
    const Command& command = splitDwCommand();
    const TypedOption<int64_t> count = integerOption(args, "--num-weight-grads", 0, int64_t(1) << 40);
    if (!count.error.empty())
        return usageError(command, count.error);
    if (!count.value)
        return usageError(command, "missing --num-weight-grads N");
    const int64_t n = *count.value;
    const std::optional<std::string> outDir = args.value("--out");
    if (!outDir)
        return usageError(command, "missing --out DIR");
    Graph graph;
    if (int code = loadOneGraph(command, args, graph); code != kExitOk)
        return code;
    Expected<partition::DiDwSplit> split = partition::splitDiDw(graph, n);
    if (!split)
        return inputError(atInputFile(args, split.error()));
    std::error_code ec;
    std::filesystem::create_directories(*outDir, ec);
    const std::filesystem::path dir(*outDir);
    if (!writeOutputFile(dir / "di.txt", writeFxText(split->di)) ||
        !writeOutputFile(dir / "dw.txt", writeFxText(split->dw)) ||
        !writeOutputFile(dir / "di.json", writeJsonGraph(split->di)) ||
        !writeOutputFile(dir / "dw.json", writeJsonGraph(split->dw)))
        return kExitBadInput;
    if (args.has("--json")) {
        nlohmann::ordered_json j = {{"di", dir / "di.txt"},
                                    {"dw", dir / "dw.txt"},
                                    {"carried", split->carried},
                                    {"di_nodes", split->di.size()},
                                    {"dw_nodes", split->dw.size()}};
        std::printf("%s\n", j.dump(1).c_str());
        return kExitOk;
    }
    std::printf("dI: %zu nodes -> %s\ndW: %zu nodes -> %s\ncarried from dI to dW:", split->di.size(),
                (dir / "di.txt").c_str(), split->dw.size(), (dir / "dw.txt").c_str());
    for (const std::string& name : split->carried)
        std::printf(" %s", name.c_str());
    std::printf("\n");
    return kExitOk;
}

} // namespace

const Command& splitDwCommand() {
    static const Command command{
        "split-dw",
        {"FILE"},
        "Split a backward graph into input-gradient (dI) and weight-gradient (dW) graphs.",
        {graphOption(),
         metaOption(),
         {"--num-weight-grads", "", "N", "the last N outputs are weight gradients", true},
         {"--out", "", "DIR", "write di.txt, dw.txt (and .json)", true},
         jsonOption()},
        1,
        1,
        &runSplitDw,
    };
    return command;
}

} // namespace jointscope::cli
