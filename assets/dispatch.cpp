// ghostbench demo: four ways to dispatch a tiny strategy chosen at run time.
//
// Each mechanism calls `apply` on the same runtime-selected strategy in a
// tight loop and prints one line "<mechanism> <ns> ns/call". The strategy is
// picked from argc, so the compiler cannot resolve the dispatch statically.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <variant>

using u64 = unsigned long long;

// --- virtual -----------------------------------------------------------------
struct Base {
    virtual ~Base() = default;
    virtual u64 apply(u64 x) const = 0;
};
struct AddV : Base { u64 apply(u64 x) const override { return x + 0x9e3779b97f4a7c15ULL; } };
struct MulV : Base { u64 apply(u64 x) const override { return x * 0xff51afd7ed558ccdULL; } };
struct XorV : Base { u64 apply(u64 x) const override { return x ^ (x >> 29); } };

// --- function pointer --------------------------------------------------------
__attribute__((noinline)) u64 add_f(u64 x) { return x + 0x9e3779b97f4a7c15ULL; }
__attribute__((noinline)) u64 mul_f(u64 x) { return x * 0xff51afd7ed558ccdULL; }
__attribute__((noinline)) u64 xor_f(u64 x) { return x ^ (x >> 29); }

// --- std::variant ------------------------------------------------------------
struct Add { u64 apply(u64 x) const { return x + 0x9e3779b97f4a7c15ULL; } };
struct Mul { u64 apply(u64 x) const { return x * 0xff51afd7ed558ccdULL; } };
struct Xor { u64 apply(u64 x) const { return x ^ (x >> 29); } };
using Strategy = std::variant<Add, Mul, Xor>;

// --- CRTP --------------------------------------------------------------------
template <class D> struct Crtp {
    u64 apply(u64 x) const { return static_cast<const D*>(this)->step(x); }
};
struct AddC : Crtp<AddC> { u64 step(u64 x) const { return x + 0x9e3779b97f4a7c15ULL; } };
struct MulC : Crtp<MulC> { u64 step(u64 x) const { return x * 0xff51afd7ed558ccdULL; } };
struct XorC : Crtp<XorC> { u64 step(u64 x) const { return x ^ (x >> 29); } };

static volatile u64 sink;

template <class F> static void measure(const char* name, long n, F&& body) {
    auto start = std::chrono::steady_clock::now();
    u64 x = body(n);
    auto stop = std::chrono::steady_clock::now();
    sink = x;
    double ns = std::chrono::duration<double, std::nano>(stop - start).count() / double(n);
    std::printf("%s %.4f ns/call\n", name, ns);
}

// Each loop is its own function so that its placement is its own.
__attribute__((noinline)) u64 loop_virtual(const Base* s, long n) {
    u64 x = 1;
    for (long i = 0; i < n; i++) x = s->apply(x) + u64(i);
    return x;
}
__attribute__((noinline)) u64 loop_fnptr(u64 (*f)(u64), long n) {
    u64 x = 1;
    for (long i = 0; i < n; i++) x = f(x) + u64(i);
    return x;
}
__attribute__((noinline)) u64 loop_variant(const Strategy* s, long n) {
    u64 x = 1;
    for (long i = 0; i < n; i++) {
        x = std::visit([x](const auto& st) { return st.apply(x); }, *s) + u64(i);
        asm volatile("" : "+r"(x));  // keep the dispatch inside the loop
    }
    return x;
}
template <class D> __attribute__((noinline)) u64 loop_crtp(const Crtp<D>* s, long n) {
    u64 x = 1;
    for (long i = 0; i < n; i++) {
        x = s->apply(x) + u64(i);
        asm volatile("" : "+r"(x));
    }
    return x;
}

int main(int argc, char** argv) {
    long n = argc > 1 ? std::atol(argv[1]) : 20000000;
    int which = argc % 3;  // runtime-selected: 1 argument → Mul, none → Add
    static const AddV av; static const MulV mv; static const XorV xv;
    const Base* v = which == 0 ? static_cast<const Base*>(&av) : which == 1 ? static_cast<const Base*>(&mv) : &xv;
    u64 (*f)(u64) = which == 0 ? add_f : which == 1 ? mul_f : xor_f;
    Strategy s = which == 0 ? Strategy(Add{}) : which == 1 ? Strategy(Mul{}) : Strategy(Xor{});
    static const AddC ac; static const MulC mc; static const XorC xc;

    measure("virtual", n, [&](long k) { return loop_virtual(v, k); });
    measure("fnptr", n, [&](long k) { return loop_fnptr(f, k); });
    measure("variant", n, [&](long k) { return loop_variant(&s, k); });
    measure("crtp", n, [&](long k) {
        switch (which) {
            case 0: return loop_crtp(&ac, k);
            case 1: return loop_crtp(&mc, k);
            default: return loop_crtp(&xc, k);
        }
    });
    return 0;
}
