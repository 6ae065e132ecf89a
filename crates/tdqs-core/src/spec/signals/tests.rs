use super::*;
use serde_json::json;

/// An object schema of string properties, all of them required.
fn strings(names: &[&str]) -> Value {
    strings_requiring(names, names)
}

fn strings_requiring(names: &[&str], required: &[&str]) -> Value {
    let properties: Map<String, Value> = names
        .iter()
        .map(|name| (name.to_string(), json!({"type": "string"})))
        .collect();
    json!({"type": "object", "properties": properties, "required": required})
}

fn cost(schema: Value) -> (u64, u64, u64, u64) {
    let signals = context_signals(&json!({"name": "t", "inputSchema": schema}));
    assert!(
        signals.required_field_count >= signals.required_param_count,
        "requiredFieldCount is at least requiredParamCount by construction"
    );
    (
        signals.required_field_count,
        signals.schema_depth,
        signals.union_choice_count,
        signals.invocation_cost,
    )
}

const EIGHT: [&str; 8] = ["a", "b", "c", "d", "e", "f", "g", "h"];

#[test]
fn the_specifications_flat_and_wrapped_examples() {
    assert_eq!(
        cost(strings(&["year", "team", "stat", "player"])),
        (4, 1, 0, 4)
    );
    assert_eq!(cost(strings(&EIGHT)), (8, 1, 0, 8));
    let wrapped = json!({
        "type": "object",
        "properties": {"request": strings(&EIGHT)},
        "required": ["request"],
    });
    assert_eq!(cost(wrapped), (9, 2, 0, 11));
}

#[test]
fn the_specifications_thirteen_example() {
    // One required object requiring three fields; one of them an object over a three-branch
    // discriminated union whose widest branch requires one field.
    let schema = json!({
        "type": "object",
        "properties": {
            "selection": {
                "type": "object",
                "properties": {
                    "cohort": {"type": "string"},
                    "period": {"type": "string"},
                    "metric": {
                        "type": "object",
                        "anyOf": [
                            {"type": "object", "properties": {"op": {"const": "sum"}}, "required": ["op"]},
                            {"type": "object", "properties": {"op": {"const": "avg"}, "window": {"type": "integer"}}, "required": ["op"]},
                            {"type": "object", "properties": {"op": {"const": "top"}, "n": {"type": "integer"}}, "required": ["op"]},
                        ],
                    },
                },
                "required": ["cohort", "period", "metric"],
            },
            "verbose": {"type": "boolean"},
        },
        "required": ["selection"],
    });
    assert_eq!(cost(schema), (5, 3, 2, 13));
}

#[test]
fn only_the_widest_union_branch_counts_fields() {
    let schema = json!({
        "type": "object",
        "properties": {"target": {"type": "object", "oneOf": [
            strings(&["x"]), strings(&["x", "y", "z"]), strings(&["y"]),
        ]}},
        "required": ["target"],
    });
    assert_eq!(cost(schema), (4, 2, 2, 10));
}

#[test]
fn widest_branch_for_fields_deepest_branch_for_depth() {
    let schema = json!({
        "type": "object",
        "properties": {"target": {"oneOf": [
            strings(&["x", "y", "z"]),
            {"type": "object", "properties": {"inner": strings(&["w"])}, "required": ["inner"]},
        ]}},
        "required": ["target"],
    });
    assert_eq!(cost(schema), (4, 3, 1, 10));
}

#[test]
fn unions_on_the_root_and_on_scalars_are_choices() {
    let root_union = json!({
        "type": "object",
        "properties": {"device": {"type": "string"}},
        "required": ["device"],
        "oneOf": [strings(&["ascii"]), strings(&["base64"])],
    });
    assert_eq!(cost(root_union), (2, 1, 1, 4));
    let scalar_union = json!({
        "type": "object",
        "properties": {"id": {"anyOf": [{"type": "integer"}, {"type": "string"}]}},
        "required": ["id"],
    });
    assert_eq!(cost(scalar_union), (1, 1, 1, 3));
}

#[test]
fn the_nullable_idiom_enums_and_type_arrays_are_not_choices() {
    let nullable = json!({
        "type": "object",
        "properties": {"label": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
        "required": ["label"],
    });
    assert_eq!(cost(nullable), (1, 1, 0, 1));
    let values = json!({
        "type": "object",
        "properties": {"mode": {"enum": ["x", "y", "z"]}, "v": {"type": ["string", "number", "null"]}},
        "required": ["mode", "v"],
    });
    assert_eq!(cost(values), (2, 1, 0, 2));
    // Two constructed branches plus null: one choice, not two.
    let nullable_union = json!({
        "type": "object",
        "properties": {"v": {"oneOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}},
        "required": ["v"],
    });
    assert_eq!(cost(nullable_union), (1, 1, 1, 3));
}

#[test]
fn optional_parts_cost_nothing() {
    let schema = json!({
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "filter": {"type": "object", "properties": {"range": strings(&["from", "to"])}, "required": ["range"]},
            "pick": {"oneOf": [{"type": "string"}, {"type": "integer"}, {"type": "boolean"}]},
        },
        "required": ["id"],
    });
    assert_eq!(cost(schema), (1, 1, 0, 1));
    let only_optional = json!({"type": "object", "properties": {"verbose": {"type": "boolean"}}});
    assert_eq!(cost(only_optional), (0, 1, 0, 0));
}

#[test]
fn an_array_of_objects_adds_a_level() {
    let schema = json!({
        "type": "object",
        "properties": {"edits": {"type": "array", "items": strings_requiring(&["path", "why"], &["path"])}},
        "required": ["edits"],
    });
    assert_eq!(cost(schema), (2, 2, 0, 4));
    let scalars = json!({
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
        "required": ["tags"],
    });
    assert_eq!(cost(scalars), (1, 1, 0, 1));
}

#[test]
fn references_resolve_into_defs_and_definitions() {
    for (keyword, pointer) in [
        ("$defs", "#/$defs/Target"),
        ("definitions", "#/definitions/Target"),
    ] {
        let schema = json!({
            "type": "object",
            "properties": {"target": {"$ref": pointer}},
            "required": ["target"],
            keyword: {"Target": strings(&["host", "port"])},
        });
        assert_eq!(cost(schema), (3, 2, 0, 5), "{keyword}");
    }
    let escaped = json!({
        "type": "object",
        "properties": {"target": {"$ref": "#/$defs/a~1b%20c"}},
        "required": ["target"],
        "$defs": {"a/b c": strings(&["x"])},
    });
    assert_eq!(cost(escaped), (2, 2, 0, 4));
    let remote = json!({
        "type": "object",
        "properties": {"target": {"$ref": "https://example.invalid/schema.json"}},
        "required": ["target"],
    });
    assert_eq!(cost(remote), (1, 1, 0, 1));
}

#[test]
fn a_definition_required_twice_counts_twice() {
    let schema = json!({
        "type": "object",
        "properties": {"from": {"$ref": "#/$defs/Point"}, "to": {"$ref": "#/$defs/Point"}},
        "required": ["from", "to"],
        "$defs": {"Point": strings(&["lat", "lon"])},
    });
    assert_eq!(cost(schema), (6, 2, 0, 8));
}

#[test]
fn a_recursive_reference_stops_at_the_repeat() {
    let schema = json!({
        "type": "object",
        "properties": {"head": {"$ref": "#/$defs/Cell"}},
        "required": ["head"],
        "$defs": {"Cell": {
            "type": "object",
            "properties": {"item": {"type": "string"}, "rest": {"$ref": "#/$defs/Cell"}},
            "required": ["item", "rest"],
        }},
    });
    assert_eq!(cost(schema), (3, 2, 0, 5));
    let root_recursion = json!({
        "type": "object",
        "properties": {"child": {"$ref": "#"}},
        "required": ["child"],
    });
    assert_eq!(cost(root_recursion), (2, 2, 0, 4));
}

#[test]
fn all_of_branches_add_up() {
    let schema = json!({
        "type": "object",
        "properties": {"config": {"allOf": [strings(&["x", "y"]), strings(&["z"])]}},
        "required": ["config"],
    });
    assert_eq!(cost(schema), (4, 2, 0, 6));
}

#[test]
fn not_counts_for_depth_only() {
    let schema = json!({
        "type": "object",
        "properties": {"spec": {
            "type": "object",
            "properties": {"kind": {"type": "string"}},
            "not": {"type": "object", "properties": {"inner": strings(&["q"])}, "required": ["inner"]},
        }},
        "required": ["spec"],
    });
    assert_eq!(cost(schema), (1, 3, 0, 5));
}

#[test]
fn branches_naming_only_required_use_the_parents_properties() {
    let schema = json!({
        "type": "object",
        "properties": {"device": {"type": "string"}, "ascii": {"type": "string"}, "base64": {"type": "string"}},
        "required": ["device"],
        "oneOf": [{"required": ["ascii"]}, {"required": ["base64"]}],
    });
    assert_eq!(cost(schema), (2, 1, 1, 4));
}

#[test]
fn depth_is_capped_at_ten() {
    let mut schema = strings(&["leaf"]);
    for _ in 0..14 {
        schema = json!({"type": "object", "properties": {"next": schema}, "required": ["next"]});
    }
    assert_eq!(cost(schema), (10, 10, 0, 10 + 2 * 9));
}

#[test]
fn shared_definitions_do_not_explode() {
    // Each level refers to the next definition from eight properties: tens of millions of
    // paths, each counted, in the time of one walk per definition.
    let mut defs = Map::new();
    defs.insert("L9".into(), strings(&["v"]));
    for level in (1..9).rev() {
        let next = format!("#/$defs/L{}", level + 1);
        let properties: Map<String, Value> = EIGHT
            .iter()
            .map(|p| (p.to_string(), json!({"$ref": next})))
            .collect();
        defs.insert(
            format!("L{level}"),
            json!({"type": "object", "properties": properties, "required": EIGHT}),
        );
    }
    let schema = json!({
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/L1"}},
        "required": ["root"],
        "$defs": defs,
    });
    let started = std::time::Instant::now();
    let (fields, depth, _, _) = cost(schema);
    // `root`, then 8^k fields in the 8^(k-1) copies of L1..L8, then `v` in each of the 8^8
    // copies of L9.
    let expected: u64 = (0..=8).map(|k| 8u64.pow(k)).sum::<u64>() + 8u64.pow(8);
    assert_eq!((fields, depth), (expected, 10));
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}

#[test]
fn an_object_parameter_without_properties_adds_no_level() {
    // The reference counts a property-less object as a leaf: one required field, depth 1.
    for free in [
        json!({"type": "object"}),
        json!({"type": "object", "properties": {}}),
        json!({"type": "object", "additionalProperties": {"type": "string"}}),
    ] {
        let schema =
            json!({"type": "object", "properties": {"config": free}, "required": ["config"]});
        let (fields, depth, choices, cost_value) = cost(schema);
        assert_eq!((fields, depth, choices, cost_value), (1, 1, 0, 1));
    }
    // An object with properties is still a level of its own.
    let nested = json!({"type": "object", "properties": {"config": {"type": "object",
        "properties": {"name": {"type": "string"}}, "required": ["name"]}}, "required": ["config"]});
    assert_eq!(cost(nested), (2, 2, 0, 4));
}

#[test]
fn absent_empty_or_property_less_schemas_cost_nothing() {
    for schema in [
        None,
        Some(json!(null)),
        Some(json!({})),
        Some(json!({"type": "object"})),
        Some(json!({"type": "object", "properties": {}})),
        Some(json!({"type": "object", "properties": {}, "required": []})),
    ] {
        let mut tool = json!({"name": "ping", "description": "Check the server answers."});
        if let Some(schema) = schema.clone() {
            tool["inputSchema"] = schema;
        }
        let signals = context_signals(&tool);
        assert_eq!(
            (
                signals.required_field_count,
                signals.schema_depth,
                signals.union_choice_count,
                signals.invocation_cost
            ),
            (0, 0, 0, 0),
            "{schema:?}"
        );
        assert_eq!(signals.param_count, 0);
        assert_eq!(signals.schema_description_coverage, 100);
    }
}

#[test]
fn the_published_per_tool_example_signals() {
    // Four parameters, one required, two described (an empty description does not count).
    let tool = json!({
        "name": "update_drive",
        "description": "Updates a drive.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "driveId": {"type": "string", "description": "The drive."},
                "label": {"type": "string", "description": "New label."},
                "tags": {"type": "array", "items": {"type": "string"}},
                "memo": {"type": "string", "description": ""},
            },
            "required": ["driveId"],
        },
    });
    let signals = context_signals(&tool);
    assert_eq!(
        signals,
        ContextSignals {
            param_count: 4,
            required_param_count: 1,
            params_with_descriptions: 2,
            params_with_enums: 0,
            schema_description_coverage: 50,
            has_nested_objects: false,
            has_output_schema: false,
            has_annotations: false,
            annotation_values: AnnotationValues::default(),
            title_is_meaningful: false,
            definition_bytes: digest::canonical_definition_bytes(&tool).len() as u64,
            input_hash: digest::input_hash(&tool),
            required_field_count: 1,
            schema_depth: 1,
            union_choice_count: 0,
            invocation_cost: 1,
        }
    );
}

#[test]
fn coverage_rounds_half_up_on_the_exact_ratio() {
    assert_eq!(schema_description_coverage(0, 0), 100);
    assert_eq!(schema_description_coverage(2, 3), 67);
    assert_eq!(schema_description_coverage(1, 3), 33);
    assert_eq!(schema_description_coverage(0, 2), 0);
    assert_eq!(schema_description_coverage(3, 3), 100);
    // Ties: Python's round() would give 12, 38 and 2.
    assert_eq!(schema_description_coverage(1, 8), 13);
    assert_eq!(schema_description_coverage(3, 8), 38);
    assert_eq!(schema_description_coverage(1, 40), 3);
}

#[test]
fn enums_nested_objects_annotations_and_output_schema() {
    let tool = json!({
        "name": "run",
        "inputSchema": {"type": "object", "properties": {
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "level": {"enum": [1, 2]},
            "opts": {"type": ["object", "null"], "properties": {"x": {"type": "string"}}},
        }},
        "outputSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
        "annotations": {"title": "Run", "readOnlyHint": false, "openWorldHint": true, "idempotentHint": "yes"},
    });
    let signals = context_signals(&tool);
    assert_eq!(signals.params_with_enums, 2);
    assert!(signals.has_nested_objects);
    assert!(signals.has_output_schema);
    assert!(signals.has_annotations);
    assert_eq!(
        signals.annotation_values,
        AnnotationValues {
            read_only: Some(false),
            destructive: None,
            idempotent: None,
            open_world: Some(true),
        }
    );
    let bare = context_signals(&json!({"name": "run", "outputSchema": {}, "annotations": {}}));
    assert!(!bare.has_output_schema);
    assert!(!bare.has_annotations);
    assert!(!bare.has_nested_objects);
}

#[test]
fn a_title_is_meaningful_when_it_differs_and_is_longer() {
    let title = |title: Value| {
        context_signals(&json!({"name": "run_tests", "title": title, "annotations": {"title": "Run the whole test suite"}}))
            .title_is_meaningful
    };
    assert!(!title(Value::Null));
    assert!(!title(json!("run_tests")));
    assert!(!title(json!("Run")));
    assert!(
        !title(json!("Run tésts")),
        "same length in characters, though longer in bytes"
    );
    assert!(title(json!("Run the test suite")));
}

#[test]
fn the_prefilter_rule() {
    assert!(is_shadow_candidate(4, 13));
    assert!(is_shadow_candidate(0, 4));
    assert!(!is_shadow_candidate(0, 3), "the absolute gap");
    assert!(!is_shadow_candidate(10, 19), "the ratio");
    assert!(is_shadow_candidate(10, 20));
    assert!(
        !is_shadow_candidate(u64::MAX / 2 + 1, u64::MAX),
        "no overflow"
    );
}

#[test]
fn each_tool_is_paired_with_its_dearest_qualifying_sibling() {
    let tools = [
        ("ping", 0),
        ("get_stat", 4),
        ("get_team", 6),
        ("query_panel", 13),
        ("export_all", 19),
    ];
    let pairs: Vec<(String, String)> = shadow_candidates(&tools)
        .into_iter()
        .map(|c| (c.tool, c.cheaper_sibling))
        .collect();
    let expected = [
        ("get_stat", "ping"),
        ("get_team", "ping"),
        ("query_panel", "get_team"),
        ("export_all", "get_team"),
    ];
    assert_eq!(
        pairs,
        expected
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .to_vec()
    );
    let first = &shadow_candidates(&tools)[2];
    assert_eq!(
        (first.invocation_cost, first.cheaper_sibling_invocation_cost),
        (13, 6)
    );
}

#[test]
fn ties_go_to_the_first_name_whatever_the_listing_order() {
    let tools = [("zeta", 2), ("query", 12), ("alpha", 2), ("mid", 2)];
    let candidates = shadow_candidates(&tools);
    assert_eq!(candidates.len(), 1);
    assert_eq!(candidates[0].cheaper_sibling, "alpha");
    let reordered = [("mid", 2), ("alpha", 2), ("query", 12), ("zeta", 2)];
    assert_eq!(shadow_candidates(&reordered), candidates);
    assert!(shadow_candidates(&[("only", 40)]).is_empty());
    assert!(shadow_candidates::<&str>(&[]).is_empty());
}

#[test]
fn candidates_from_raw_tools() {
    let tools = [
        json!({"name": "list_all", "inputSchema": {"type": "object", "properties": {}}}),
        json!({"name": "lookup", "inputSchema": strings(&["a", "b", "c", "d"])}),
        json!({"name": "cheap", "inputSchema": strings(&["a"])}),
    ];
    let candidates = shadow_candidates_of_tools(&tools);
    assert_eq!(
        candidates,
        vec![ShadowCandidate {
            tool: "lookup".into(),
            invocation_cost: 4,
            cheaper_sibling: "list_all".into(),
            cheaper_sibling_invocation_cost: 0,
        }]
    );
}
