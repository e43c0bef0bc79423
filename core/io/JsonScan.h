// A fast, strict scan of one JSON text (a TORCH_TRACE record's line) for the index's hot path: the events a
// SAX handler gets, keys and strings as views into the text, nothing built. It gives up (false) on what is
// not JSON and also on what it leaves to a full parser: escapes and bytes past ASCII in strings, a negative
// zero, integers of more than 19 digits. What it accepts, nlohmann's parser accepts with the same events
// (tst_jsonscan); where it gives up, the caller parses again with nlohmann (its events, or its located
// error).
//
// Handler: bool key(std::string_view), string(std::string_view), unsignedNumber(uint64_t), otherNumber(),
// boolean(), null(), startObject(), startArray(), end(); false from one stops the scan.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace jointscope::json_scan {

template <class Handler> class Scanner {
public:
    Scanner(std::string_view text, Handler& handler, size_t maxDepth)
        : at_(text.data()), end_(text.data() + text.size()), handler_(handler), maxDepth_(maxDepth) {}

    bool scan() {
        skipSpace();
        if (!value())
            return false;
        skipSpace();
        return at_ == end_;
    }

private:
    static bool isDigit(char c) { return c >= '0' && c <= '9'; }

    void skipSpace() {
        while (at_ != end_ && (*at_ == ' ' || *at_ == '\t' || *at_ == '\n' || *at_ == '\r'))
            ++at_;
    }

    bool value() {
        if (at_ == end_)
            return false;
        switch (*at_) {
        case '{':
            return object();
        case '[':
            return array();
        case '"': {
            std::string_view text;
            return string(text) && handler_.string(text);
        }
        case 't':
            return literal("true") && handler_.boolean();
        case 'f':
            return literal("false") && handler_.boolean();
        case 'n':
            return literal("null") && handler_.null();
        default:
            return (*at_ == '-' || isDigit(*at_)) && number();
        }
    }

    bool literal(std::string_view word) {
        if (size_t(end_ - at_) < word.size() || std::string_view(at_, word.size()) != word)
            return false;
        at_ += word.size();
        return true;
    }

    // At the opening quote. Printable ASCII and escapes; other bytes (UTF-8 to validate) go to the full
    // parser. A string with escapes is decoded into decoded_, which the view then points into.
    bool string(std::string_view& text) {
        const char* begin = ++at_;
        for (; at_ != end_; ++at_) {
            const auto c = static_cast<unsigned char>(*at_);
            if (c == '"') {
                text = std::string_view(begin, size_t(at_ - begin));
                ++at_;
                return true;
            }
            if (c == '\\') {
                decoded_.assign(begin, at_);
                return escapedString(text);
            }
            if (c < 0x20 || c >= 0x80)
                return false;
        }
        return false;
    }

    bool escapedString(std::string_view& text) {
        while (at_ != end_) {
            const auto c = static_cast<unsigned char>(*at_);
            if (c == '"') {
                text = decoded_;
                ++at_;
                return true;
            }
            if (c < 0x20 || c >= 0x80)
                return false;
            if (c != '\\') {
                decoded_ += char(c);
                ++at_;
                continue;
            }
            if (++at_ == end_)
                return false;
            switch (*at_++) {
            case '"':
                decoded_ += '"';
                break;
            case '\\':
                decoded_ += '\\';
                break;
            case '/':
                decoded_ += '/';
                break;
            case 'b':
                decoded_ += '\b';
                break;
            case 'f':
                decoded_ += '\f';
                break;
            case 'n':
                decoded_ += '\n';
                break;
            case 'r':
                decoded_ += '\r';
                break;
            case 't':
                decoded_ += '\t';
                break;
            case 'u': {
                uint32_t code = 0;
                if (!hex4(code))
                    return false;
                if (code >= 0xDC00 && code <= 0xDFFF)
                    return false;                       // a low surrogate first
                if (code >= 0xD800 && code <= 0xDBFF) { // a high surrogate: its low one must follow
                    uint32_t low = 0;
                    if (end_ - at_ < 2 || at_[0] != '\\' || at_[1] != 'u')
                        return false;
                    at_ += 2;
                    if (!hex4(low) || low < 0xDC00 || low > 0xDFFF)
                        return false;
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                }
                appendUtf8(code);
                break;
            }
            default:
                return false;
            }
        }
        return false;
    }

    bool hex4(uint32_t& code) {
        if (end_ - at_ < 4)
            return false;
        for (int i = 0; i < 4; ++i, ++at_) {
            const char c = *at_;
            const int digit = c >= '0' && c <= '9'   ? c - '0'
                              : c >= 'a' && c <= 'f' ? c - 'a' + 10
                              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                     : -1;
            if (digit < 0)
                return false;
            code = code * 16 + uint32_t(digit);
        }
        return true;
    }

    void appendUtf8(uint32_t code) {
        if (code < 0x80) {
            decoded_ += char(code);
        } else if (code < 0x800) {
            decoded_ += char(0xC0 | (code >> 6));
            decoded_ += char(0x80 | (code & 0x3F));
        } else if (code < 0x10000) {
            decoded_ += char(0xE0 | (code >> 12));
            decoded_ += char(0x80 | ((code >> 6) & 0x3F));
            decoded_ += char(0x80 | (code & 0x3F));
        } else {
            decoded_ += char(0xF0 | (code >> 18));
            decoded_ += char(0x80 | ((code >> 12) & 0x3F));
            decoded_ += char(0x80 | ((code >> 6) & 0x3F));
            decoded_ += char(0x80 | (code & 0x3F));
        }
    }

    bool digits() {
        if (at_ == end_ || !isDigit(*at_))
            return false;
        while (at_ != end_ && isDigit(*at_))
            ++at_;
        return true;
    }

    // JSON's grammar for numbers: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
    bool number() {
        const bool negative = *at_ == '-';
        if (negative)
            ++at_;
        const char* first = at_;
        if (at_ != end_ && *at_ == '0')
            ++at_;
        else if (!digits())
            return false;
        const size_t integerDigits = size_t(at_ - first);
        bool integral = true;
        if (at_ != end_ && *at_ == '.') {
            ++at_;
            if (!digits())
                return false;
            integral = false;
        }
        if (at_ != end_ && (*at_ == 'e' || *at_ == 'E')) {
            ++at_;
            if (at_ != end_ && (*at_ == '+' || *at_ == '-'))
                ++at_;
            if (!digits())
                return false;
            integral = false;
        }
        if (at_ != end_ && isDigit(*at_))
            return false; // "01"
        if (!integral) {
            // nlohmann refuses a number past a double's range; one out of range either way is left to it.
            double value = 0;
            const auto [end, error] = std::from_chars(negative ? first - 1 : first, at_, value);
            return error == std::errc() && end == at_ && handler_.otherNumber();
        }
        if (negative) // a negative integer; -0 is the integer 0 to nlohmann, left to it
            return !(integerDigits == 1 && *first == '0') && handler_.otherNumber();
        if (integerDigits > 19)
            return false;
        uint64_t value = 0;
        for (const char* d = first; d != at_; ++d)
            value = value * 10 + uint64_t(*d - '0');
        return handler_.unsignedNumber(value);
    }

    bool object() { return container(true); }
    bool array() { return container(false); }

    // An object's members or an array's values, separated by commas, up to the closing bracket.
    bool container(bool isObject) {
        const char close = isObject ? '}' : ']';
        if (++depth_ > maxDepth_ || !(isObject ? handler_.startObject() : handler_.startArray()))
            return false;
        ++at_;
        skipSpace();
        if (at_ == end_ || *at_ != close) {
            while (true) {
                if (!(isObject ? member() : value()))
                    return false;
                skipSpace();
                if (at_ == end_ || *at_ != ',')
                    break;
                ++at_;
                skipSpace();
            }
            if (at_ == end_ || *at_ != close)
                return false;
        }
        ++at_;
        --depth_;
        return handler_.end();
    }

    bool member() {
        std::string_view name;
        if (at_ == end_ || *at_ != '"' || !string(name) || !handler_.key(name))
            return false;
        skipSpace();
        if (at_ == end_ || *at_ != ':')
            return false;
        ++at_;
        skipSpace();
        return value();
    }

    const char* at_;
    const char* end_;
    Handler& handler_;
    size_t maxDepth_;
    size_t depth_ = 0;
    std::string decoded_;
};

template <class Handler> bool scan(std::string_view text, Handler& handler, size_t maxDepth) {
    return Scanner<Handler>(text, handler, maxDepth).scan();
}

} // namespace jointscope::json_scan
