// Helpers shared by the QtTest suites.
#pragma once

#include <QString>
#include <QtTest>

#include <fstream>
#include <sstream>
#include <string>

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

inline QString q(const std::string& s) { return QString::fromStdString(s); }

} // namespace jointscope::test

// QVERIFY an Expected<T>, printing its diagnostic on failure.
#define JS_VERIFY_EXPECTED(e) QVERIFY2(bool(e), (e) ? "" : (e).error().format().c_str())
