// Located diagnostics: every reader reports problems as file:line:col.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace jointscope {

enum class Severity { Error, Warning, Note };

struct SourceLocation {
    std::string file;
    uint32_t line = 0; // 1-based; 0 = unknown
    uint32_t col = 0;  // 1-based; 0 = unknown
};

struct Diagnostic {
    Severity severity = Severity::Error;
    SourceLocation loc;
    std::string message;
    // Names of the graph nodes the message is about, in its order (the partitioner's infinite-capacity
    // path), for tools that point at them. Names, not ids: the engine runs on a cleaned-up graph copy.
    std::vector<std::string> nodes = {};

    // "file:line:col: error: message" (gcc style, so editors can jump to it).
    std::string format() const;
};

Diagnostic makeError(SourceLocation loc, std::string message);

// What an action that yields nothing returns: Expected<Done>.
struct Done {};

// A value or the diagnostic explaining why there is none.
template <typename T> class Expected {
public:
    Expected(T value) : state_(std::move(value)) {}
    Expected(Diagnostic error) : state_(std::move(error)) {}

    explicit operator bool() const { return std::holds_alternative<T>(state_); }
    T& operator*() { return std::get<T>(state_); }
    const T& operator*() const { return std::get<T>(state_); }
    T* operator->() { return &std::get<T>(state_); }
    const T* operator->() const { return &std::get<T>(state_); }
    const Diagnostic& error() const { return std::get<Diagnostic>(state_); }
    T take() { return std::move(std::get<T>(state_)); }

private:
    std::variant<T, Diagnostic> state_;
};

} // namespace jointscope
