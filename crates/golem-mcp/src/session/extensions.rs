//! State the layers above the session keep per client, by its type, without
//! the session knowing those types (the prompt list `get_prompt` checks
//! arguments against is one): the way a feature adds state to `Client`
//! without `Client` importing the feature.

use std::any::Any;
use std::sync::{Arc, Mutex, PoisonError};

/// One value of each type asked for, made on first use.
#[derive(Default)]
pub(crate) struct Extensions {
    /// Few (one per feature that keeps state), so a scan is the lookup.
    slots: Mutex<Vec<Arc<dyn Any + Send + Sync>>>,
}

impl Extensions {
    /// The value of type `T`, made with `T::default()` the first time.
    pub(crate) fn get_or_default<T: Default + Send + Sync + 'static>(&self) -> Arc<T> {
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        // Compared by type first: only the one found is cloned (this is on
        // every call's path).
        if let Some(found) = slots
            .iter()
            .find(|slot| (***slot).is::<T>())
            .and_then(|slot| slot.clone().downcast::<T>().ok())
        {
            return found;
        }
        let made = Arc::new(T::default());
        slots.push(made.clone());
        made
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Counter(std::sync::atomic::AtomicU32);

    #[test]
    fn each_type_gets_one_value_made_once() {
        let extensions = Extensions::default();
        let first = extensions.get_or_default::<Counter>();
        first.0.store(7, std::sync::atomic::Ordering::Relaxed);
        let text = extensions.get_or_default::<String>();
        assert!(text.is_empty());
        let again = extensions.get_or_default::<Counter>();
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(again.0.load(std::sync::atomic::Ordering::Relaxed), 7);
    }
}
