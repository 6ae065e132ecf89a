use super::*;

fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (k, v) in pairs {
        map.insert(
            HeaderName::from_static(k),
            HeaderValue::from_str(v).unwrap(),
        );
    }
    map
}

#[test]
fn backoff_doubles_from_half_a_second_and_caps_at_eight() {
    let p = RetryPolicy::default();
    let steps: Vec<f64> = (0..7).map(|n| p.backoff(n, 0.0).as_secs_f64()).collect();
    assert_eq!(steps, vec![0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]);
}

#[test]
fn jitter_shortens_a_step_by_at_most_a_quarter() {
    let p = RetryPolicy::default();
    assert_eq!(p.backoff(2, 1.0), Duration::from_millis(1500));
    assert_eq!(p.backoff(2, 0.5), Duration::from_millis(1750));
    for n in 0..10 {
        let d = p.backoff(n, fastrand::f64());
        assert!(d <= Duration::from_secs(8));
        assert!(d >= p.backoff(n, 0.0).mul_f64(0.75));
    }
}

#[test]
fn retry_after_ms_wins_over_retry_after() {
    let now = SystemTime::now();
    let h = headers(&[("retry-after-ms", "250"), ("retry-after", "9")]);
    assert_eq!(requested_delay(&h, now), Some(Duration::from_millis(250)));
    let h = headers(&[("retry-after", "3")]);
    assert_eq!(requested_delay(&h, now), Some(Duration::from_secs(3)));
}

#[test]
fn absurd_retry_headers_never_panic() {
    let now = SystemTime::now();
    let p = RetryPolicy::default();
    for (name, value) in [
        ("retry-after-ms", "1e300"),
        ("retry-after-ms", "-5"),
        ("retry-after-ms", "NaN"),
        ("retry-after-ms", "inf"),
        ("retry-after", "1e30"),
        ("retry-after", "1e400"),
        ("retry-after", "-1"),
        ("retry-after", "nan"),
        ("retry-after", "18446744073709551616"),
        ("retry-after", "Sun, 06 Nov 999999999999999 08:49:37 GMT"),
        ("retry-after", "Sun, 06 Nov -999999999999999 08:49:37 GMT"),
        ("retry-after", "Fri, 31 Dec 9999 23:59:59 GMT"),
    ] {
        let h = headers(&[(name, value)]);
        let delay = p.server_delay(&h, now);
        assert!(
            delay.is_none_or(|d| d <= p.max_server_delay),
            "{name}: {value} gave {delay:?}"
        );
    }
    let h = headers(&[("retry-after-ms", "1e300")]);
    assert_eq!(requested_delay(&h, now), Some(Duration::MAX));
}

#[test]
fn retry_after_as_http_date() {
    let now = UNIX_EPOCH + Duration::from_secs(784_111_777); // Sun, 06 Nov 1994 08:49:37 GMT
    let h = headers(&[("retry-after", "Sun, 06 Nov 1994 08:49:47 GMT")]);
    assert_eq!(requested_delay(&h, now), Some(Duration::from_secs(10)));
    // A date in the past means "now".
    let h = headers(&[("retry-after", "Sun, 06 Nov 1994 08:49:00 GMT")]);
    assert_eq!(requested_delay(&h, now), Some(Duration::ZERO));
    assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 PST"), None);
    assert_eq!(parse_http_date("yesterday"), None);
    assert_eq!(
        parse_http_date("Thu, 29 Feb 2024 00:00:00 GMT"),
        Some(UNIX_EPOCH + Duration::from_secs(1_709_164_800))
    );
}

#[test]
fn an_overlong_server_delay_falls_back_to_backoff() {
    let p = RetryPolicy::default();
    let h = headers(&[("retry-after", "3600")]);
    assert_eq!(p.server_delay(&h, SystemTime::now()), None);
    let h = headers(&[("retry-after", "60")]);
    assert_eq!(
        p.server_delay(&h, SystemTime::now()),
        Some(Duration::from_secs(60))
    );
}

#[test]
fn classification_follows_the_sdk_rules() {
    let none = HeaderMap::new();
    let s = |c: u16| StatusCode::from_u16(c).unwrap();
    for code in [408, 409, 429, 500, 502, 503, 529] {
        assert_eq!(classify(s(code), &none, b""), Disposition::Retry, "{code}");
    }
    for code in [400, 401, 402, 403, 404, 413, 422, 301] {
        assert_eq!(classify(s(code), &none, b""), Disposition::Fail, "{code}");
    }
    let spend = br#"{"type":"error","error":{"type":"rate_limit_error","message":"limit","details":{"error_code":"enforced_spend_limit_reached"}}}"#;
    assert_eq!(classify(s(429), &none, spend), Disposition::SpendLimit);
}

#[test]
fn x_should_retry_forces_or_forbids_but_never_revives_a_hard_status() {
    let yes = headers(&[("x-should-retry", "true")]);
    let no = headers(&[("x-should-retry", "false")]);
    let s = |c: u16| StatusCode::from_u16(c).unwrap();
    assert_eq!(classify(s(529), &no, b""), Disposition::Fail);
    assert_eq!(classify(s(422), &yes, b""), Disposition::Retry);
    assert_eq!(classify(s(401), &yes, b""), Disposition::Fail);
}

#[test]
fn endpoint_drops_a_trailing_v1_and_hides_credentials_and_query() {
    let e = Endpoint::parse("http://user:pass-word-123@127.0.0.1:8080/v1/?key=abc#x").unwrap();
    assert_eq!(
        e.url("/v1/models").as_str(),
        "http://user:pass-word-123@127.0.0.1:8080/v1/models?key=abc"
    );
    assert_eq!(e.display("/v1/models"), "http://127.0.0.1:8080/v1/models");
    assert!(e.is_loopback());
    let e = Endpoint::parse("https://gateway.example/anthropic").unwrap();
    assert_eq!(
        e.display("/v1/messages"),
        "https://gateway.example/anthropic/v1/messages"
    );
    assert!(!e.is_loopback());
    assert!(Endpoint::parse("ftp://x").is_err());
    let err = Endpoint::parse("not a url?secret=1").unwrap_err();
    assert!(!err.cause.contains("secret"), "{}", err.cause);
}

#[test]
fn answer_schemas_require_every_key() {
    let tool = answer_schema(QuestionKind::Tool);
    assert_eq!(
        tool["properties"]["scores"]["required"]
            .as_array()
            .unwrap()
            .len(),
        6
    );
    assert_eq!(
        tool["properties"]["scores"]["properties"]["purpose_clarity"]["properties"]["score"]
            ["enum"],
        json!([1, 2, 3, 4, 5])
    );
    let coherence = answer_schema(QuestionKind::Coherence);
    assert_eq!(
        coherence["required"],
        json!(["scores", "shadowing_risks", "summary"])
    );
    assert_eq!(
        coherence["properties"]["scores"]["required"],
        json!([
            "disambiguation",
            "naming_consistency",
            "tool_count_appropriateness",
            "completeness"
        ])
    );
}

#[test]
fn api_key_debug_hides_the_value_and_refuses_header_breakers() {
    let key = ApiKey::new("  sk-ant-api03-test-value-1234\n").unwrap();
    assert!(!format!("{key:?}").contains("test-value"));
    assert_eq!(key.expose(), "sk-ant-api03-test-value-1234");
    assert!(!key.is_claude_oauth_token());
    assert!(ApiKey::new("two words-here").is_err());
    assert!(ApiKey::new("   ").is_err());
    assert!(ApiKey::new("sk-ant-oat01-abcdefgh")
        .unwrap()
        .is_claude_oauth_token());
}

#[test]
fn server_errors_of_each_dialect_are_read() {
    let a = ServerError::parse(
        br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}"#,
    );
    assert_eq!(a.error_type.as_deref(), Some("overloaded_error"));
    assert_eq!(a.message.as_deref(), Some("Overloaded"));
    assert_eq!(a.request_id.as_deref(), Some("req_1"));
    let o = ServerError::parse(
        br#"{"error":{"message":"model not found","type":null,"code":"model_not_found"}}"#,
    );
    assert_eq!(o.error_type.as_deref(), Some("model_not_found"));
    let ollama = ServerError::parse(br#"{"error":"model \"x\" not found"}"#);
    assert_eq!(ollama.message.as_deref(), Some("model \"x\" not found"));
}
