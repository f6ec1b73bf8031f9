use super::*;

const KB: u64 = 1 << 10;
const MB: u64 = 1 << 20;
const GB: u64 = 1 << 30;
const PB: u64 = 1 << 50;

#[test]
fn parses_every_valid_size_form() {
    let cases: &[(&str, u64)] = &[
        ("0", 0),
        ("1024", 1024),
        ("1B", 1),
        ("1b", 1),
        ("1KB", KB),
        ("1kb", KB),
        ("1Kb", KB),
        ("512MB", 512 * MB),
        ("4GB", 4 * GB),
        ("8GB", 8 * GB),
        ("6GB", 6 * GB),
        ("2 gb", 2 * GB),
        ("  4GB  ", 4 * GB),
        ("1\tTB", 1 << 40),
        ("1PB", PB),
        ("8191PB", 8191 * PB),
        ("9223372036854775807", i64::MAX as u64),
    ];
    for (text, bytes) in cases {
        assert_eq!(parse_size(text), Some(*bytes), "{text:?}");
    }
}

#[test]
fn refuses_every_invalid_size_form() {
    for text in [
        "",
        "   ",
        "1.5GB",
        "-1",
        "8EB",
        "1PB000",
        "8192PB",
        "9223372036854775808",
        "99999999999999999999999",
        "GB",
        "1 G",
        "1GiB",
        "+1",
        "0x10",
    ] {
        assert_eq!(parse_size(text), None, "{text:?}");
    }
}

#[test]
fn percentages_between_zero_and_hundred_are_accepted() {
    for (text, of_1000) in [
        ("10%", 100),
        ("12.5%", 125),
        ("100%", 1000),
        (" 50 %", 500),
        ("0.1%", 1),
    ] {
        let p = Percent::parse(text).unwrap_or_else(|| panic!("{text:?} should parse"));
        assert_eq!(p.of(1000), of_1000, "{text:?}");
    }
}

#[test]
fn percentages_out_of_range_or_malformed_are_refused() {
    for text in [
        "0%", "0.0%", "101%", "100.01%", "-1%", "%", "1.%", ".5%", "abc%", "10", "1e2%", "10%%",
    ] {
        assert_eq!(Percent::parse(text), None, "{text:?}");
    }
}

#[test]
fn percentages_floor_to_whole_bytes() {
    let p = Percent::parse("10%").unwrap();
    assert_eq!(p.of(1023), 102);
    let p = Percent::parse("33.333%").unwrap();
    assert_eq!(p.of(3), 0);
    assert_eq!(p.of(24 * GB), 24 * GB * 33_333 / 100_000);
    assert_eq!(Percent::parse("12.5%").unwrap().to_string(), "12.5%");
}

#[test]
fn node_weight_accepts_zero_sizes_and_percentages() {
    let key = "external_meta_cache_max_weight";
    assert_eq!(parse_node_weight(key, "0"), Ok(NodeWeight::Unlimited));
    assert_eq!(parse_node_weight(key, "0GB"), Ok(NodeWeight::Unlimited));
    assert_eq!(parse_node_weight(key, "8GB"), Ok(NodeWeight::Bytes(8 * GB)));
    let ten = parse_node_weight(key, "10%").unwrap();
    assert_eq!(ten.resolve(10 * GB), Some(GB));
    assert_eq!(NodeWeight::Unlimited.resolve(10 * GB), None);
    for bad in ["0%", "101%", "-1%", "-1", "1.5GB", ""] {
        assert_eq!(
            parse_node_weight(key, bad).unwrap_err().to_string(),
            format!("Invalid cache weight for '{key}': {bad}")
        );
    }
}

#[test]
fn catalog_and_entry_weights_must_be_positive_sizes() {
    let cases: &[(&str, &str, Result<u64, &str>)] = &[
        ("meta.cache.max-weight", "4GB", Ok(4 * GB)),
        (
            "meta.cache.max-weight",
            "0",
            Err("meta.cache.max-weight must be positive"),
        ),
        (
            "meta.cache.max-weight",
            "0MB",
            Err("meta.cache.max-weight must be positive"),
        ),
        (
            "meta.cache.max-weight",
            "10%",
            Err("Invalid cache weight for 'meta.cache.max-weight': 10%"),
        ),
        (
            "meta.cache.max-weight",
            "1.5GB",
            Err("Invalid cache weight for 'meta.cache.max-weight': 1.5GB"),
        ),
        ("meta.cache.hive.file.max-weight", "2GB", Ok(2 * GB)),
        (
            "meta.cache.hive.file.max-weight",
            "0",
            Err("meta.cache.hive.file.max-weight must be positive"),
        ),
        (
            "meta.cache.hive.file.max-weight",
            "-1",
            Err("Invalid cache weight for 'meta.cache.hive.file.max-weight': -1"),
        ),
        (
            "meta.cache.hive.file.max-weight",
            "8EB",
            Err("Invalid cache weight for 'meta.cache.hive.file.max-weight': 8EB"),
        ),
        (
            "meta.cache.hive.file.max-weight",
            "",
            Err("Invalid cache weight for 'meta.cache.hive.file.max-weight': "),
        ),
    ];
    for (key, value, expected) in cases {
        let got = parse_positive_weight(key, value).map_err(|e| e.to_string());
        assert_eq!(got, expected.map_err(str::to_owned), "{key}={value:?}");
    }
}

#[test]
fn entry_limits_may_not_exceed_the_catalog_limit() {
    let key = "meta.cache.hive.file.max-weight";
    assert_eq!(
        check_entry_within_catalog(key, 2 * GB, Some(4 * GB)),
        Ok(())
    );
    assert_eq!(
        check_entry_within_catalog(key, 4 * GB, Some(4 * GB)),
        Ok(())
    );
    assert_eq!(check_entry_within_catalog(key, 2 * GB, None), Ok(()));
    assert_eq!(
        check_entry_within_catalog(key, 5 * GB, Some(4 * GB))
            .unwrap_err()
            .to_string(),
        "meta.cache.hive.file.max-weight can not exceed meta.cache.max-weight"
    );
    assert_eq!(
        WeightError::UnknownProperty {
            key: "meta.cache.hive.bogus.max-weight".into()
        }
        .to_string(),
        "Unknown metadata cache weight property: meta.cache.hive.bogus.max-weight"
    );
}

#[test]
fn exact_format_round_trips() {
    for bytes in [0, 1, 1000, KB, 1536 * MB, 4 * GB, 3 * PB, i64::MAX as u64] {
        let text = format_exact(bytes);
        assert_eq!(parse_size(&text), Some(bytes), "{text}");
    }
    assert_eq!(format_exact(4 * GB), "4GB");
    assert_eq!(format_exact(1536 * MB), "1536MB");
    assert_eq!(format_bytes(1536 * MB), "1.50 GiB");
}
