//! The text exposition format's spelling: escaped label values and help, sample values (counts as
//! exact integers, floats in their shortest round-trip digits), family headers.

/// A sample value. Counts stay integers end to end: they print exactly (beyond 2^53 too) and
/// several times faster than through `f64` formatting, which matters at 40,000 series a scrape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Sample {
    Count(u64),
    Signed(i64),
    Real(f64),
}

/// A label value or help text escaped for the text format.
pub(super) fn escape(text: &str, out: &mut String) {
    // Names seldom hold a character to escape: then the text goes in whole (a character at a
    // time was a tenth of a render with curves in a profile).
    if !text.bytes().any(|b| matches!(b, b'\\' | b'"' | b'\n')) {
        out.push_str(text);
        return;
    }
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// A sample value as the text format spells it.
pub(super) fn push_sample(sample: Sample, out: &mut String) {
    match sample {
        Sample::Count(v) => out.push_str(itoa::Buffer::new().format(v)),
        Sample::Signed(v) => out.push_str(itoa::Buffer::new().format(v)),
        Sample::Real(v) => push_value(v, out),
    }
}

/// A floating-point sample value as the text format spells it.
pub(super) fn push_value(value: f64, out: &mut String) {
    use std::fmt::Write;
    // Ratios of 0 and 1 and whole seconds are common: print them as `{}` would, without the
    // shortest-float search (exact below 2^53; `-0` keeps its sign through `{}`).
    const EXACT: f64 = 9_007_199_254_740_992.0;
    if value.fract() == 0.0 && value.abs() < EXACT && !(value == 0.0 && value.is_sign_negative()) {
        out.push_str(itoa::Buffer::new().format(value as i64));
    } else if value.is_nan() {
        out.push_str("NaN");
    } else if value.is_infinite() {
        out.push_str(if value > 0.0 { "+Inf" } else { "-Inf" });
    } else if value.fract() != 0.0 {
        // A ratio, a mean: the shortest digits that read back as `value` — those `{}` finds,
        // found several times faster (zmij, serde_json's float printer; most of the advisor's
        // 15,000 curve points a scrape are such ratios). Very small ones may come in exponent
        // form, which the text format reads too.
        out.push_str(zmij::Buffer::new().format_finite(value));
    } else {
        let _ = write!(out, "{value}");
    }
}

/// The `# HELP` and `# TYPE` lines of a family of `kind` (`counter`, `gauge`, `histogram`).
pub(super) fn push_header(name: &str, help: &str, kind: &str, out: &mut String) {
    out.push_str("# HELP ");
    out.push_str(name);
    out.push(' ');
    escape(help, out);
    out.push_str("\n# TYPE ");
    out.push_str(name);
    out.push(' ');
    out.push_str(kind);
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_values_are_spelled_as_the_text_format_wants() {
        let mut out = String::new();
        escape("a\"b\\c\nd", &mut out);
        assert_eq!(out, "a\\\"b\\\\c\\nd");
        out.clear();
        escape("hive-file", &mut out);
        escape("ünïcode", &mut out);
        assert_eq!(out, "hive-fileünïcode", "nothing to escape: as is");
        let spelled: Vec<String> = [
            0.0,
            1_073_741_824.0,
            0.5,
            -1.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ]
        .into_iter()
        .map(|v| {
            let mut s = String::new();
            push_value(v, &mut s);
            s
        })
        .collect();
        assert_eq!(
            spelled,
            ["0", "1073741824", "0.5", "-1", "+Inf", "-Inf", "NaN"]
        );
    }

    #[test]
    fn whole_floats_print_as_the_standard_formatter_prints_them() {
        for v in [
            0.0,
            -0.0,
            1.0,
            -7.0,
            1e15,
            9_007_199_254_740_991.0,
            9_007_199_254_740_992.0,
            1e300,
        ] {
            let mut s = String::new();
            push_value(v, &mut s);
            assert_eq!(s, format!("{v}"), "{v:?}");
        }
    }

    #[test]
    fn fractions_print_their_shortest_digits_and_read_back_exactly() {
        for v in [
            0.5,
            0.873_456_123_456_789_1,
            1.0 / 3.0,
            -0.25,
            1_764_730_000.125,
            0.000_123,
            1e-7,
            f64::MIN_POSITIVE,
            123_456.789e10 + 0.5,
        ] {
            let mut s = String::new();
            push_value(v, &mut s);
            assert_eq!(s.parse::<f64>().ok(), Some(v), "{s} reads back");
            if v.abs() >= 1e-4 {
                assert_eq!(s, format!("{v}"), "{v:?}: the digits `{{}}` prints");
            }
        }
    }

    #[test]
    fn counts_print_exactly_beyond_the_floats_integers() {
        let mut s = String::new();
        for sample in [
            Sample::Count(u64::MAX),
            Sample::Signed(-1),
            Sample::Count(9_007_199_254_740_993),
        ] {
            push_sample(sample, &mut s);
            s.push(' ');
        }
        assert_eq!(s, "18446744073709551615 -1 9007199254740993 ");
    }
}
