//! Symbol demangling: C++ (Itanium ABI, via cpp_demangle) and Rust (legacy and
//! v0, via rustc-demangle). Anything else, such as C, is returned unchanged.

/// The readable name of a symbol. Never fails: a name that does not demangle
/// is shown as written.
pub fn demangle(symbol: &str) -> String {
    if !symbol.starts_with("_Z") && !symbol.starts_with("_R") && !symbol.starts_with("__Z") {
        return symbol.to_string();
    }
    // Rust first: legacy Rust symbols are valid Itanium names too, but only
    // rustc-demangle strips their hash.
    if let Ok(rust) = rustc_demangle::try_demangle(symbol) {
        return format!("{rust:#}");
    }
    let itanium = symbol
        .strip_prefix('_')
        .filter(|s| s.starts_with("_Z"))
        .unwrap_or(symbol);
    match cpp_demangle::Symbol::new(itanium) {
        Ok(parsed) => parsed.demangle().unwrap_or_else(|_| symbol.to_string()),
        Err(_) => symbol.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::demangle;

    #[test]
    fn cpp_rust_and_c() {
        assert_eq!(
            demangle("_ZNK2ns6Widget4areaEv"),
            "ns::Widget::area() const"
        );
        assert_eq!(demangle("_Z3fooi"), "foo(int)");
        assert_eq!(
            demangle("_ZN4core3ptr13drop_in_place17h0123456789abcdefE"),
            "core::ptr::drop_in_place"
        );
        assert_eq!(demangle("main"), "main");
        assert_eq!(demangle("_Znot_valid"), "_Znot_valid");
    }
}
