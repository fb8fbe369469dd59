//! The Golem agent core. Placeholder: the agent, decoders and the test model arrive with the agent issue.
