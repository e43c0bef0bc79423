// Helpers shared by the TORCH_TRACE and TORCH_LOGS readers: line walking, glog prefixes, bounded problem
// lists, node counting of graph payloads.
#pragma once

#include "io/TraceLog.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace jointscope::log_support {

// Walks a text line by line without copying; strips the '\n' and a trailing '\r' (CRLF logs exist).
class LineCursor {
public:
    explicit LineCursor(std::string_view text) : text_(text) {}

    bool atEnd() const { return pos_ >= text_.size(); }
    // Line number (1-based) of the line peek()/next() return.
    uint32_t lineNumber() const { return line_; }
    size_t offset() const { return pos_; } // of the line peek()/next() return
    std::string_view peek() const { return lineAt(pos_).first; }
    std::string_view next() {
        auto [line, end] = lineAt(pos_);
        pos_ = end;
        ++line_;
        return line;
    }

private:
    std::pair<std::string_view, size_t> lineAt(size_t pos) const {
        if (pos >= text_.size())
            return {std::string_view(), text_.size()};
        size_t end = text_.find('\n', pos);
        size_t next = end == std::string_view::npos ? text_.size() : end + 1;
        if (end == std::string_view::npos)
            end = text_.size();
        std::string_view line = text_.substr(pos, end - pos);
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        return {line, next};
    }

    std::string_view text_;
    size_t pos_ = 0;
    uint32_t line_ = 1;
};

struct GlogPrefix {
    std::string_view rank; // "[rank0]:" or ""
    size_t end = 0;        // offset just past the ']' that closes "file.py:LINE]"
};

inline bool isDigit(char c) {
    return c >= '0' && c <= '9';
}

// Matches torch's glog-style prefix: optional "[rankN]:", then "V1206 15:18:20.253000 1500233
// path/file.py:1288]". (TorchLogsFormatter: f"{rankprefix}{V|I|W|E|C}{MMDD} {HH:MM:SS}.{usec} {process}
// {path}:{lineno}]").
inline std::optional<GlogPrefix> parseGlogPrefix(std::string_view line) {
    GlogPrefix prefix;
    size_t i = 0;
    if (line.substr(0, 5) == "[rank") {
        size_t close = line.find("]:", 5);
        if (close == std::string_view::npos || close > 16)
            return std::nullopt;
        prefix.rank = line.substr(0, close + 2);
        i = close + 2;
    }
    auto digits = [&](size_t count) {
        for (size_t k = 0; k < count; ++k, ++i)
            if (i >= line.size() || !isDigit(line[i]))
                return false;
        return true;
    };
    auto expect = [&](char c) {
        if (i >= line.size() || line[i] != c)
            return false;
        ++i;
        return true;
    };
    if (i >= line.size() || std::string_view("VIWEC").find(line[i]) == std::string_view::npos)
        return std::nullopt;
    ++i;
    if (!digits(4) || !expect(' ') || !digits(2) || !expect(':') || !digits(2) || !expect(':') ||
        !digits(2) || !expect('.'))
        return std::nullopt;
    size_t fraction = i;
    while (i < line.size() && isDigit(line[i]))
        ++i;
    if (i == fraction || !expect(' '))
        return std::nullopt;
    size_t process = i;
    while (i < line.size() && isDigit(line[i]))
        ++i;
    if (i == process || !expect(' '))
        return std::nullopt;
    // path:LINE] — the path has no spaces; the line number is the digits right before ']'.
    size_t close = line.find(']', i);
    if (close == std::string_view::npos)
        return std::nullopt;
    size_t digitsStart = close;
    while (digitsStart > i && isDigit(line[digitsStart - 1]))
        --digitsStart;
    if (digitsStart == close || digitsStart == i || line[digitsStart - 1] != ':')
        return std::nullopt;
    if (line.substr(i, digitsStart - i).find(' ') != std::string_view::npos)
        return std::nullopt;
    prefix.end = close + 1;
    return prefix;
}

// Collects problems, keeping at most a fixed number so that a garbage file cannot grow the list without
// bound.
class ProblemSink {
public:
    ProblemSink(GraphIndex& index, std::string fileName) : index_(index), fileName_(std::move(fileName)) {}
    // Notes how many problems were left out; call once at the end.
    void finish() {
        if (dropped_)
            index_.problems.push_back(Diagnostic{Severity::Note, SourceLocation{fileName_, 0, 0},
                                                 std::to_string(dropped_) + " more problems not listed"});
        dropped_ = 0;
    }
    ProblemSink(const ProblemSink&) = delete;
    ProblemSink& operator=(const ProblemSink&) = delete;

    const std::string& fileName() const { return fileName_; }
    void add(Severity severity, uint32_t line, uint32_t col, std::string message) {
        add(Diagnostic{severity, SourceLocation{fileName_, line, col}, std::move(message)});
    }
    void add(Diagnostic diagnostic) {
        if (listed_ >= kMaxProblems) {
            ++dropped_;
            return;
        }
        ++listed_;
        index_.problems.push_back(std::move(diagnostic));
    }

    static constexpr size_t kMaxProblems = 200;

private:
    GraphIndex& index_;
    std::string fileName_;
    size_t listed_ = 0;
    size_t dropped_ = 0;
};

// The last step of every log reader: each graph's payload parsed with readFxText (errors located in the log
// file) to fill its nodes, then problems.finish(). A graph that does not parse stays listed with nodes = 0
// and its located error goes to the problems.
void finishIndex(GraphIndex& index, ProblemSink& problems);

// Why `payload` ("class NAME(torch.nn.Module):" and its body) is not print_readable() output, e.g. a user's
// nn.Module source printed in the same paste ("it has 'def __init__' before 'def forward'"); nullopt when its
// class body holds exactly what print_readable writes: one 'def forward' and nested submodule classes. Says
// nothing about whether the forward reads as FX.
std::optional<std::string> notPrintedGraphReason(std::string_view payload);

// "class <Name>(torch.nn.Module):" (print_readable's first line); returns the offset of "class" in `line` or
// npos.
size_t findGraphModuleClass(std::string_view line);

// Removes ANSI escape sequences (CSI "\x1b[...X" and lone ESC) that coloured terminal output carries.
std::string stripAnsi(std::string_view line);
// tlparse's CompileId display without the brackets: "[!{compiled_autograd_id}/]{frame_id}/{frame_compile_id}
// [_{attempt}]", '-' for a missing frame id part, "" when none of the three ids is known.
std::string compileIdText(std::optional<uint64_t> autogradId, std::optional<uint64_t> frameId,
                          std::optional<uint64_t> frameCompileId, std::optional<uint64_t> attempt);

std::string_view trimRight(std::string_view s);
size_t indentOf(std::string_view line); // leading spaces and tabs

} // namespace jointscope::log_support
