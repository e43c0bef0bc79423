// Tokenizer for the Python subset FX prints, one logical line at a time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace jointscope::fx {

enum class TokenKind : uint8_t {
    Name,    // identifier or keyword
    Int,     // 123
    Float,   // 1.5, 1e-05
    String,  // '...' or "..." (text keeps the quotes; see decodeStringLiteral)
    Op,      // punctuation and operators: ( ) , = + // ** ... -> and so on
    Comment, // "# ..." up to the end of the physical line (text keeps the '#')
    Newline, // end of a logical line
    End,     // end of input
};

struct Token {
    TokenKind kind = TokenKind::End;
    uint32_t line = 1; // 1-based, relative to the lexed text
    uint32_t col = 1;  // 1-based byte column
    uint32_t offset = 0;
    std::string_view text;

    // Inline comparison: these run for every token, and short literals do not need memcmp.
    static bool sameText(std::string_view a, std::string_view b) {
        if (a.size() != b.size())
            return false;
        for (size_t i = 0; i < a.size(); ++i)
            if (a[i] != b[i])
                return false;
        return true;
    }
    bool is(TokenKind k, std::string_view t) const { return kind == k && sameText(text, t); }
    bool isOp(std::string_view t) const { return is(TokenKind::Op, t); }
    bool isName(std::string_view t) const { return is(TokenKind::Name, t); }
    uint32_t endOffset() const { return offset + static_cast<uint32_t>(text.size()); }
};

struct LexError {
    uint32_t line = 0;
    uint32_t col = 0;
    std::string message;
};

// Splits text into logical lines as Python does: newlines inside brackets join physical lines, so a
// multi-line `def forward(` or `return (` is one line. Runs in linear time and never recurses.
class FxLexer {
public:
    static constexpr uint32_t kMaxBracketDepth = 256;

    explicit FxLexer(std::string_view text);

    // Lexes the next logical line into `tokens` (cleared first). The last token is Newline, or End when the
    // input is exhausted. A blank line yields only a Newline. Returns false on bad input; see error().
    bool nextLine(std::vector<Token>& tokens);
    const LexError& error() const { return error_; }

    // Position just after the last byte, for "unexpected end of input" diagnostics.
    Token endToken() const;

private:
    bool fail(uint32_t line, uint32_t col, std::string message);
    Token makeToken(TokenKind kind, size_t begin, size_t end) const;
    bool lexString(std::vector<Token>& tokens);
    bool lexNumber(std::vector<Token>& tokens);
    bool lexOperator(std::vector<Token>& tokens);

    struct OpenBracket {
        char bracket;
        uint32_t line;
        uint32_t col;
    };

    std::string_view text_;
    size_t pos_ = 0;
    size_t lineStart_ = 0;
    uint32_t line_ = 1;
    std::vector<OpenBracket> open_;
    LexError error_;
};

// Decodes a Python string literal token ('a\'b', "x\n") into its UTF-8 value; false on a bad escape.
bool decodeStringLiteral(std::string_view literal, std::string& out);

// Human description of a token for "expected X, found Y" messages: 'foo', end of line, end of input.
std::string describeToken(const Token& token);

} // namespace jointscope::fx
