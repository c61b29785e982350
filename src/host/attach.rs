//! The shape of a host, as a type chosen once when the host is assembled: whether it
//! has a DMA bus, and whether it has one core or several.
//!
//! A model either has a bus (one [`Bus`], and DMA engines, [`NicDma`], on every NIC)
//! or has none: the NICs then move frames to and from memory at no cost. The host is
//! generic over [`Shape`]: [`WithBus`] stores the bus and the engines, [`NoBus`]
//! stores [`Absent`] in their place, a type of size zero whose accessors return `None`
//! as a constant. The per-frame path of a host without a bus therefore neither stores
//! nor checks a bus: `if M::PRESENT` and `Attached::get` fold away when the host is
//! compiled for its model.
//!
//! Likewise for the cores ([`CoreModel`], in `cores.rs`): a host with one (`OneCore`) keeps its
//! core's state in place and never asks which core a task runs on; a host with several
//! (`ManyCores`) keeps the core in hand boxed, so that switching to another core
//! moves two pointers, and finds its next one-of-a-kind event in a tournament tree
//! (`SlotTree`) rather than by a scan of every slot.

use crate::host::cores::CoreModel;
use crate::model::bus::Bus;
use crate::model::nic::dma::NicDma;
use std::marker::PhantomData;

/// A component that may be absent: `Some` for the component itself, `None` for
/// [`Absent`].
pub(crate) trait Attached<T> {
    /// The component, if present.
    fn get(&self) -> Option<&T>;
    /// The component, if present.
    fn get_mut(&mut self) -> Option<&mut T>;
}

/// An absent component: no state, no checks.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Absent;

impl<T> Attached<T> for Absent {
    #[inline(always)]
    fn get(&self) -> Option<&T> {
        None
    }
    #[inline(always)]
    fn get_mut(&mut self) -> Option<&mut T> {
        None
    }
}

/// Implements [`Attached`] for a component type that is present.
macro_rules! present {
    ($t:ty) => {
        impl Attached<$t> for $t {
            #[inline(always)]
            fn get(&self) -> Option<&$t> {
                Some(self)
            }
            #[inline(always)]
            fn get_mut(&mut self) -> Option<&mut $t> {
                Some(self)
            }
        }
    };
}
present!(Bus);
present!(NicDma);

/// The bus, and the NICs' DMA engines, of a host: present or absent; and its cores.
pub(crate) trait Shape: 'static {
    /// One core or several.
    type Cores: CoreModel;
    /// Whether the model has a bus (a constant the compiler folds).
    const PRESENT: bool;
    /// The bus as the host stores it.
    type Bus: Attached<Bus>;
    /// A NIC's DMA engines as its port stores them.
    type Dma: Attached<NicDma>;
    /// The stored bus from the one built for the model (`Some` exactly when
    /// [`Self::PRESENT`]).
    fn bus(b: Option<Bus>) -> Self::Bus;
    /// A port's stored engines from those built for the model (`Some` exactly when
    /// [`Self::PRESENT`]).
    fn dma(d: Option<NicDma>) -> Self::Dma;
}

/// A host with a DMA bus, and cores `C`.
pub(crate) struct WithBus<C>(PhantomData<C>);

impl<C: CoreModel> Shape for WithBus<C> {
    type Cores = C;
    const PRESENT: bool = true;
    type Bus = Bus;
    type Dma = NicDma;
    fn bus(b: Option<Bus>) -> Bus {
        b.expect("a host assembled with a bus for a model without one")
    }
    fn dma(d: Option<NicDma>) -> NicDma {
        d.expect("a model with a bus gives every NIC DMA engines")
    }
}

/// A host without a bus, with cores `C`.
pub(crate) struct NoBus<C>(PhantomData<C>);

impl<C: CoreModel> Shape for NoBus<C> {
    type Cores = C;
    const PRESENT: bool = false;
    type Bus = Absent;
    type Dma = Absent;
    fn bus(b: Option<Bus>) -> Absent {
        assert!(
            b.is_none(),
            "a host assembled without a bus for a model with one"
        );
        Absent
    }
    fn dma(d: Option<NicDma>) -> Absent {
        assert!(
            d.is_none(),
            "a NIC with DMA engines on a host without a bus"
        );
        Absent
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::cores::OneCore;

    #[test]
    fn an_absent_component_takes_no_space_and_is_none() {
        assert_eq!(std::mem::size_of::<<NoBus<OneCore> as Shape>::Bus>(), 0);
        assert_eq!(std::mem::size_of::<<NoBus<OneCore> as Shape>::Dma>(), 0);
        let mut a = <NoBus<OneCore> as Shape>::dma(None);
        assert!(Attached::<NicDma>::get(&a).is_none());
        assert!(Attached::<NicDma>::get_mut(&mut a).is_none());
    }

    #[test]
    #[should_panic(expected = "without a bus for a model with one")]
    fn a_bus_given_to_a_host_without_one_is_refused() {
        let b = Bus::new(&crate::model::bus::BusConfig::default());
        let _ = <NoBus<OneCore> as Shape>::bus(Some(b));
    }
}
