//! rocprofv3's `--truncate-kernels`: a demangled name cut to its bare function name.

/// The bare function name of a demangled name: from the end, trailing spaces and whole bracketed
/// groups (`(…)`, `<…>`, `[…]`, nesting counted per kind) are passed over; the name is what lies
/// before them, back to the previous space or `:`.
/// `void step<long long>(long long*, unsigned long)` → `step`; `krp::saxpy(…)` → `saxpy`.
/// Written from the behaviour of rocprofiler-sdk's `common::truncate_name` (`demangle.cpp`
/// @2695e836), including its edge cases: a name with no brackets is returned whole up to its last
/// space or `:`.
pub fn truncate(name: &str) -> String {
    let b = name.as_bytes();
    // `end` walks back from the end of the string; everything at or after it is passed over.
    let mut end = b.len();
    let mut depth = 0u32;
    let (mut open, mut close) = (0u8, 0u8);
    while end > 0 {
        let c = b[end - 1];
        if depth == 0 {
            match c {
                b')' => (open, close) = (b')', b'('),
                b'>' => (open, close) = (b'>', b'<'),
                b']' => (open, close) = (b']', b'['),
                b' ' => {
                    end -= 1;
                    continue;
                }
                _ => break,
            }
            depth = 1;
        } else if c == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
        }
        end -= 1;
    }
    let start = b[..end]
        .iter()
        .rposition(|&c| c == b' ' || c == b':')
        .map_or(0, |i| i + 1);
    // Both cuts fall next to ASCII bytes, so they are char boundaries.
    name[start..end].to_string()
}

#[cfg(test)]
mod tests {
    use super::truncate;

    #[test]
    fn cuts_to_the_function_name() {
        for (full, bare) in [
            ("void step<long long>(long long*, unsigned long)", "step"),
            ("krp::saxpy(unsigned long long*, unsigned long)", "saxpy"),
            ("Foo<int, float>::foo(a[], int (int))", "foo"),
            (
                "touch(unsigned long long*, unsigned long, unsigned long long)",
                "touch",
            ),
            ("names_plain", "names_plain"),
            ("ns::f(int) const", "const"),
            ("", ""),
            ("f(int)  ", "f"),
        ] {
            assert_eq!(truncate(full), bare, "{full}");
        }
    }
}
