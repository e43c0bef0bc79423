// A random-access iterator over a container that is read by position and gives values, not references (a
// GraphList builds each entry when read; a SpillVector may read its value back from the disk).
#pragma once

#include <compare>
#include <cstddef>
#include <iterator>

namespace jointscope {

template <class Container, class Value> class PositionIterator {
public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = Value;
    using difference_type = std::ptrdiff_t;
    using reference = Value;
    using pointer = void;

    PositionIterator() = default;
    PositionIterator(const Container* container, size_t at) : container_(container), at_(at) {}
    Value operator*() const { return (*container_)[at_]; }
    Value operator[](difference_type n) const { return (*container_)[size_t(difference_type(at_) + n)]; }
    PositionIterator& operator++() { return ++at_, *this; }
    PositionIterator operator++(int) { return {container_, at_++}; }
    PositionIterator& operator--() { return --at_, *this; }
    PositionIterator operator--(int) { return {container_, at_--}; }
    PositionIterator& operator+=(difference_type n) { return at_ = size_t(difference_type(at_) + n), *this; }
    PositionIterator& operator-=(difference_type n) { return *this += -n; }
    friend PositionIterator operator+(PositionIterator it, difference_type n) { return it += n; }
    friend PositionIterator operator+(difference_type n, PositionIterator it) { return it += n; }
    friend PositionIterator operator-(PositionIterator it, difference_type n) { return it -= n; }
    friend difference_type operator-(const PositionIterator& a, const PositionIterator& b) {
        return difference_type(a.at_) - difference_type(b.at_);
    }
    friend bool operator==(const PositionIterator& a, const PositionIterator& b) { return a.at_ == b.at_; }
    friend auto operator<=>(const PositionIterator& a, const PositionIterator& b) { return a.at_ <=> b.at_; }

private:
    const Container* container_ = nullptr;
    size_t at_ = 0;
};

} // namespace jointscope
