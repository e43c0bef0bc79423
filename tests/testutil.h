// Helpers shared by the QtTest suites.
#pragma once

#include <QString>
#include <QtTest>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace jointscope::test {

inline std::string sharedPath(const std::string& relative) { return std::string(JOINTSCOPE_SHARED_DIR) + "/" + relative; }
inline std::string sourcePath(const std::string& relative) { return std::string(JOINTSCOPE_SOURCE_DIR) + "/" + relative; }

inline std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        qFatal("cannot read %s", path.c_str());
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Lines of text without their '\n' (and '\r': multi_rank_rank_1.log has CRLF line ends); a final empty line
// is kept when text ends with '\n', as str.split('\n') does.
inline std::vector<std::string> splitLines(const std::string& text) {
    std::vector<std::string> lines;
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string::npos)
            end = text.size();
        std::string line = text.substr(pos, end - pos);
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        lines.push_back(std::move(line));
        pos = end + 1;
    }
    return lines;
}

inline QString q(const std::string& s) { return QString::fromStdString(s); }

} // namespace jointscope::test

// QVERIFY an Expected<T>, printing its diagnostic on failure.
#define JS_VERIFY_EXPECTED(e) QVERIFY2(bool(e), (e) ? "" : (e).error().format().c_str())
