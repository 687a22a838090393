// An allocator whose vectors leave the elements that resize() or vector(n) value-initialise uninitialised (a vector
// given a value, vector(n, 0), still fills): large arrays written in full before they are read cost no first pass
// over their pages (a database chunk's residues, the long-pair aligner's grid lines). core/numerics/sat.hpp has one
// of its own that also puts large blocks on huge pages.
#pragma once

#include <memory>
#include <new>
#include <utility>

namespace swgpu {

template <class T>
struct uninitialized_allocator : std::allocator<T> {
    template <class U>
    struct rebind {
        using other = uninitialized_allocator<U>;
    };
    uninitialized_allocator() = default;
    template <class U>
    uninitialized_allocator(const uninitialized_allocator<U>&) noexcept {}
    template <class U>
    void construct(U* p) noexcept {
        ::new (static_cast<void*>(p)) U;
    }
    template <class U, class... Args>
    void construct(U* p, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
};

}  // namespace swgpu
