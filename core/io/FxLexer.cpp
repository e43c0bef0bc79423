#include "io/FxLexer.h"

#include <array>
#include <cstdio>
#include <cstring>

namespace jointscope::fx {
namespace {

constexpr std::array<bool, 256> makeIdentTable(bool digits) {
    std::array<bool, 256> table{};
    for (int c = 'a'; c <= 'z'; ++c)
        table[c] = true;
    for (int c = 'A'; c <= 'Z'; ++c)
        table[c] = true;
    table['_'] = true;
    if (digits)
        for (int c = '0'; c <= '9'; ++c)
            table[c] = true;
    return table;
}
constexpr std::array<bool, 256> kIdentStart = makeIdentTable(false);
constexpr std::array<bool, 256> kIdentChar = makeIdentTable(true);

bool isIdentStart(char c) {
    return kIdentStart[static_cast<unsigned char>(c)];
}
bool isDigit(char c) {
    return c >= '0' && c <= '9';
}
bool isIdentChar(char c) {
    return kIdentChar[static_cast<unsigned char>(c)];
}

char closingFor(char open) {
    return open == '(' ? ')' : open == '[' ? ']' : '}';
}

constexpr std::string_view kSingleCharOps = "()[]{},:;.=+-*/%@&|^~<>";

std::string describeByte(char c) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f)
        return std::string("'") + c + "'";
    char buf[16];
    std::snprintf(buf, sizeof buf, "byte 0x%02x", byte);
    return buf;
}

void appendUtf8(uint32_t cp, std::string& out) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xc0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xe0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
        out += static_cast<char>(0xf0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    }
}

int hexValue(char c) {
    if (isDigit(c))
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

} // namespace

FxLexer::FxLexer(std::string_view text) : text_(text) {}

bool FxLexer::fail(uint32_t line, uint32_t col, std::string message) {
    error_ = LexError{line, col, std::move(message)};
    return false;
}

Token FxLexer::makeToken(TokenKind kind, size_t begin, size_t end) const {
    Token t;
    t.kind = kind;
    t.line = line_;
    t.col = static_cast<uint32_t>(begin - lineStart_ + 1);
    t.offset = static_cast<uint32_t>(begin);
    t.text = text_.substr(begin, end - begin);
    return t;
}

Token FxLexer::endToken() const {
    // Points at the end of the last line that has content.
    size_t end = text_.size();
    uint32_t line = 1;
    size_t lineStart = 0;
    for (const char* p = text_.data();
         (p = static_cast<const char*>(std::memchr(p, '\n', end - (p - text_.data())))); ++p) {
        const auto i = static_cast<size_t>(p - text_.data());
        if (i + 1 < end) {
            ++line;
            lineStart = i + 1;
        }
    }
    Token t;
    t.kind = TokenKind::End;
    t.line = line;
    size_t lineEnd = end;
    if (lineEnd > lineStart && text_[lineEnd - 1] == '\n')
        --lineEnd;
    t.col = static_cast<uint32_t>(lineEnd - lineStart + 1);
    t.offset = static_cast<uint32_t>(end);
    return t;
}

bool FxLexer::lexString(std::vector<Token>& tokens) {
    const char quote = text_[pos_];
    size_t i = pos_ + 1;
    while (i < text_.size()) {
        const char c = text_[i];
        if (c == '\\') {
            i += 2;
            continue;
        }
        if (c == quote) {
            tokens.push_back(makeToken(TokenKind::String, pos_, i + 1));
            pos_ = i + 1;
            return true;
        }
        if (c == '\n')
            break;
        ++i;
    }
    const size_t stop = i < text_.size() ? i : text_.size();
    return fail(line_, static_cast<uint32_t>(stop - lineStart_ + 1),
                std::string("expected closing ") + quote + " of the string literal started at column " +
                    std::to_string(pos_ - lineStart_ + 1) + ", found " +
                    (stop < text_.size() ? "end of line" : "end of input"));
}

bool FxLexer::lexNumber(std::vector<Token>& tokens) {
    size_t i = pos_;
    bool isFloat = false;
    while (i < text_.size() && isDigit(text_[i]))
        ++i;
    if (i < text_.size() && text_[i] == '.' && !(i + 1 < text_.size() && text_[i + 1] == '.')) {
        isFloat = true;
        ++i;
        while (i < text_.size() && isDigit(text_[i]))
            ++i;
    }
    if (i < text_.size() && (text_[i] == 'e' || text_[i] == 'E')) {
        size_t j = i + 1;
        if (j < text_.size() && (text_[j] == '+' || text_[j] == '-'))
            ++j;
        if (j < text_.size() && isDigit(text_[j])) {
            isFloat = true;
            i = j;
            while (i < text_.size() && isDigit(text_[i]))
                ++i;
        }
    }
    if (i < text_.size() && isIdentChar(text_[i]))
        return fail(line_, static_cast<uint32_t>(i - lineStart_ + 1),
                    "expected a number, found " + describeByte(text_[i]) + " inside it");
    tokens.push_back(makeToken(isFloat ? TokenKind::Float : TokenKind::Int, pos_, i));
    pos_ = i;
    return true;
}

bool FxLexer::lexOperator(std::vector<Token>& tokens) {
    const char c = text_[pos_];
    const char next = pos_ + 1 < text_.size() ? text_[pos_ + 1] : '\0';
    size_t length = 1;
    switch (c) {
    case '.':
        length = next == '.' && pos_ + 2 < text_.size() && text_[pos_ + 2] == '.' ? 3 : 1;
        break;
    case '*':
        length = next == '*' ? 2 : 1;
        break;
    case '/':
        length = next == '/' ? 2 : 1;
        break;
    case '=':
    case '!':
        length = next == '=' ? 2 : 1;
        break;
    case '<':
        length = next == '=' || next == '<' ? 2 : 1;
        break;
    case '>':
        length = next == '=' || next == '>' ? 2 : 1;
        break;
    case '-':
        length = next == '>' ? 2 : 1;
        break;
    default:
        break;
    }
    if (length > 1) {
        tokens.push_back(makeToken(TokenKind::Op, pos_, pos_ + length));
        pos_ += length;
        return true;
    }
    if (kSingleCharOps.find(c) == std::string_view::npos)
        return fail(line_, static_cast<uint32_t>(pos_ - lineStart_ + 1), "unexpected " + describeByte(c));
    const auto col = static_cast<uint32_t>(pos_ - lineStart_ + 1);
    if (c == '(' || c == '[' || c == '{') {
        if (open_.size() >= kMaxBracketDepth)
            return fail(line_, col,
                        "brackets nested deeper than " + std::to_string(kMaxBracketDepth) + " levels");
        open_.push_back({c, line_, col});
    } else if (c == ')' || c == ']' || c == '}') {
        if (open_.empty())
            return fail(line_, col, std::string("unmatched '") + c + "'");
        const OpenBracket open = open_.back();
        if (closingFor(open.bracket) != c)
            return fail(line_, col,
                        std::string("expected '") + closingFor(open.bracket) + "' to close '" + open.bracket +
                            "' at " + std::to_string(open.line) + ":" + std::to_string(open.col) +
                            ", found '" + c + "'");
        open_.pop_back();
    }
    tokens.push_back(makeToken(TokenKind::Op, pos_, pos_ + 1));
    ++pos_;
    return true;
}

bool FxLexer::nextLine(std::vector<Token>& tokens) {
    tokens.clear();
    while (true) {
        if (pos_ >= text_.size()) {
            if (!open_.empty()) {
                const OpenBracket open = open_.back();
                const Token end = endToken();
                return fail(end.line, end.col,
                            std::string("expected '") + closingFor(open.bracket) + "' to close '" +
                                open.bracket + "' at " + std::to_string(open.line) + ":" +
                                std::to_string(open.col) + ", found end of input");
            }
            tokens.push_back(tokens.empty() ? endToken() : makeToken(TokenKind::Newline, pos_, pos_));
            return true;
        }
        const char c = text_[pos_];
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
            ++pos_;
            continue;
        }
        if (c == '\n') {
            if (open_.empty())
                tokens.push_back(makeToken(TokenKind::Newline, pos_, pos_));
            ++pos_;
            ++line_;
            lineStart_ = pos_;
            if (open_.empty())
                return true;
            continue;
        }
        if (c == '#') {
            size_t end = text_.find('\n', pos_);
            if (end == std::string_view::npos)
                end = text_.size();
            size_t trimmed = end;
            while (trimmed > pos_ && (text_[trimmed - 1] == '\r' || text_[trimmed - 1] == ' '))
                --trimmed;
            tokens.push_back(makeToken(TokenKind::Comment, pos_, trimmed));
            pos_ = end;
            continue;
        }
        bool ok = true;
        if (isIdentStart(c)) {
            size_t end = pos_ + 1;
            while (end < text_.size() && isIdentChar(text_[end]))
                ++end;
            tokens.push_back(makeToken(TokenKind::Name, pos_, end));
            pos_ = end;
        } else if (isDigit(c)) {
            ok = lexNumber(tokens);
        } else if (c == '\'' || c == '"') {
            ok = lexString(tokens);
        } else {
            ok = lexOperator(tokens);
        }
        if (!ok)
            return false;
    }
}

bool decodeStringLiteral(std::string_view literal, std::string& out) {
    out.clear();
    if (literal.size() < 2)
        return false;
    const std::string_view body = literal.substr(1, literal.size() - 2);
    out.reserve(body.size());
    for (size_t i = 0; i < body.size(); ++i) {
        const char c = body[i];
        if (c != '\\') {
            out += c;
            continue;
        }
        if (++i >= body.size())
            return false;
        const char e = body[i];
        switch (e) {
        case '\\':
            out += '\\';
            break;
        case '\'':
            out += '\'';
            break;
        case '"':
            out += '"';
            break;
        case 'n':
            out += '\n';
            break;
        case 't':
            out += '\t';
            break;
        case 'r':
            out += '\r';
            break;
        case 'a':
            out += '\a';
            break;
        case 'b':
            out += '\b';
            break;
        case 'f':
            out += '\f';
            break;
        case 'v':
            out += '\v';
            break;
        case 'x':
        case 'u':
        case 'U': {
            const size_t digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
            uint32_t cp = 0;
            for (size_t k = 1; k <= digits; ++k) {
                const int h = i + k < body.size() ? hexValue(body[i + k]) : -1;
                if (h < 0)
                    return false;
                cp = cp * 16 + static_cast<uint32_t>(h);
            }
            i += digits;
            if (cp > 0x10ffff)
                return false;
            appendUtf8(cp, out);
            break;
        }
        default:
            if (e >= '0' && e <= '7') {
                uint32_t cp = 0;
                size_t k = 0;
                while (k < 3 && i + k < body.size() && body[i + k] >= '0' && body[i + k] <= '7')
                    cp = cp * 8 + static_cast<uint32_t>(body[i + k++] - '0');
                i += k - 1;
                appendUtf8(cp, out);
            } else {
                // Python keeps unknown escapes verbatim.
                out += '\\';
                out += e;
            }
        }
    }
    return true;
}

std::string describeToken(const Token& token) {
    switch (token.kind) {
    case TokenKind::Newline:
        return "end of line";
    case TokenKind::End:
        return "end of input";
    case TokenKind::Comment:
        return "a comment";
    default:
        break;
    }
    std::string_view text = token.text;
    if (text.size() > 40)
        return "'" + std::string(text.substr(0, 37)) + "...'";
    return "'" + std::string(text) + "'";
}

} // namespace jointscope::fx
