//! The checks of a request's [`ModelSettings`] that both providers make
//! before sending anything: a setting the API cannot honour, or would
//! refuse, is a [`ModelError`] that says which and why, not a silent
//! omission or a round trip for a 400. What each API can take is the
//! adapter's [`SettingRules`]; how a setting is written is the adapter's
//! wire format.

use golem_model::{ModelError, ModelSettings, Request, ToolChoice};

/// What one API takes of the [`ModelSettings`].
#[derive(Debug, Clone, Copy)]
pub struct SettingRules {
    /// The provider's name, which starts every message.
    pub provider: &'static str,
    /// The highest temperature it takes (the lowest is 0).
    pub max_temperature: f32,
    /// The most stop sequences it takes.
    pub max_stop: usize,
    /// Whether it takes a seed.
    pub seed: bool,
}

/// Why `request`'s settings cannot be sent as they are, under `rules`.
///
/// # Errors
///
/// A temperature or `top_p` out of range, too many stop sequences, a seed
/// the API has no field for, a tool choice that needs tools when none are
/// offered, or one naming a tool that is not offered.
pub fn check_settings(request: &Request, rules: SettingRules) -> Result<(), ModelError> {
    let ModelSettings {
        temperature,
        top_p,
        stop,
        seed,
        tool_choice,
        max_output_tokens,
        ..
    } = &request.settings;
    let provider = rules.provider;
    let refuse = |why: String| Err(ModelError::new(format!("{provider}: {why}")));
    if max_output_tokens == &Some(0) {
        return refuse("the output token limit is 0; a model must be allowed at least 1".into());
    }
    if let Some(temperature) = temperature
        && !(0.0..=rules.max_temperature).contains(temperature)
    {
        return refuse(format!(
            "temperature {temperature} is out of range: this API takes 0 to {}",
            rules.max_temperature
        ));
    }
    if let Some(top_p) = top_p
        && !(0.0..=1.0).contains(top_p)
    {
        return refuse(format!("top_p {top_p} is out of range: it takes 0 to 1"));
    }
    if stop.len() > rules.max_stop {
        return refuse(format!(
            "{} stop sequences given; this API takes at most {}",
            stop.len(),
            rules.max_stop
        ));
    }
    if seed.is_some() && !rules.seed {
        return refuse("this API has no seed; leave it unset for this model".into());
    }
    match tool_choice {
        Some(ToolChoice::Required) if request.tools.is_empty() => {
            refuse("a tool call is required, but no tools are offered".into())
        }
        Some(ToolChoice::Tool(name)) if !request.tools.iter().any(|tool| &tool.name == name) => {
            refuse(format!(
                "the tool choice names {name:?}, which is not among the {} tools offered",
                request.tools.len()
            ))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use golem_model::ToolSpec;

    const RULES: SettingRules = SettingRules {
        provider: "p",
        max_temperature: 1.0,
        max_stop: 2,
        seed: false,
    };

    fn with(settings: ModelSettings, tools: &[&str]) -> Request {
        Request {
            tools: tools
                .iter()
                .map(|name| ToolSpec {
                    name: (*name).into(),
                    description: String::new(),
                    input_schema: serde_json::from_str(r#"{"type":"object"}"#).expect("schema"),
                })
                .collect(),
            settings,
            ..Request::default()
        }
    }

    fn refusal(settings: ModelSettings, tools: &[&str]) -> String {
        check_settings(&with(settings, tools), RULES)
            .expect_err("refused")
            .to_string()
    }

    #[test]
    fn what_the_api_cannot_honour_is_refused_before_sending() {
        let fine = ModelSettings {
            temperature: Some(1.0),
            top_p: Some(0.5),
            stop: vec!["a".into(), "b".into()],
            tool_choice: Some(ToolChoice::Tool("t".into())),
            ..ModelSettings::default()
        };
        assert!(check_settings(&with(fine, &["t"]), RULES).is_ok());
        let set = |change: fn(&mut ModelSettings)| {
            let mut settings = ModelSettings::default();
            change(&mut settings);
            settings
        };
        assert_eq!(
            refusal(set(|s| s.temperature = Some(1.5)), &[]),
            "p: temperature 1.5 is out of range: this API takes 0 to 1"
        );
        assert!(refusal(set(|s| s.top_p = Some(-0.1)), &[]).contains("top_p -0.1"));
        assert!(refusal(set(|s| s.stop = vec!["x".into(); 3]), &[]).contains("at most 2"));
        assert!(refusal(set(|s| s.seed = Some(1)), &[]).contains("no seed"));
        assert!(refusal(set(|s| s.max_output_tokens = Some(0)), &[]).contains("limit is 0"));
        assert!(
            refusal(set(|s| s.tool_choice = Some(ToolChoice::Required)), &[])
                .contains("no tools are offered")
        );
        assert_eq!(
            refusal(
                set(|s| s.tool_choice = Some(ToolChoice::Tool("u".into()))),
                &["t"]
            ),
            "p: the tool choice names \"u\", which is not among the 1 tools offered"
        );
    }
}
