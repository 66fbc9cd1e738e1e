//! The NATS stages of start-up: each subscription becomes an input with its own
//! ring, each server an output; both keep a connection in the status. Inputs are
//! wired first: an output learns from them which performers came from its own
//! server (never published back).

use std::sync::Arc;

use super::Wiring;
use crate::bridge::BridgeError;
use crate::bridge::config::{NatsInputConfig, NatsOutputConfig};
use crate::io::inputs::nats::{NatsInput, subscribe};
use crate::io::nats::{Received, connect};
use crate::io::outputs::nats::NatsOutput;
use crate::pipeline::performer::StreamSkeleton;
use crate::pipeline::status::{ConnectionStats, Latency};
use crate::pipeline::{Delivery, output_ring};

/// The performers received from each server, by its configured address.
pub(in crate::bridge) type ReceivedFrom = Vec<(String, Arc<Received>)>;

impl Wiring<'_> {
    pub async fn nats_inputs(
        &mut self,
        inputs: &[NatsInputConfig],
        bridge_name: &str,
    ) -> Result<ReceivedFrom, BridgeError> {
        let mut received_from = ReceivedFrom::new();
        for input in inputs {
            let name = format!("nats-in:{} {}", input.server, input.subjects);
            let connection = Arc::new(ConnectionStats::new(&input.server));
            let server = input.server();
            let client = connect(&server, bridge_name, connection.clone()).await?;
            let subscriber = subscribe(&client, &input.subjects, server.connect_wait)
                .await
                .map_err(|source| BridgeError::Subscribe {
                    subjects: input.subjects.clone(),
                    source,
                })?;
            self.status
                .connections
                .push((name.clone(), connection.clone()));
            let received = Arc::new(Received::default());
            received_from.push((input.server.clone(), received.clone()));
            let port = self.new_input(name);
            let task = NatsInput {
                subscriber,
                bridge: bridge_name.to_owned(),
                port,
                received,
                connection,
                shutdown: self.stop.clone(),
            };
            self.spawn_input("NATS input", task.run());
        }
        Ok(received_from)
    }

    pub async fn nats_outputs(
        &mut self,
        outputs: &[NatsOutputConfig],
        bridge_name: &str,
        received_from: &ReceivedFrom,
        skeletons: &Arc<[StreamSkeleton]>,
    ) -> Result<(), BridgeError> {
        for out in outputs {
            let name = format!("nats-out:{}", out.server);
            let connection = Arc::new(ConnectionStats::new(&out.server));
            let client = connect(&out.server(), bridge_name, connection.clone()).await?;
            self.status
                .connections
                .push((name.clone(), connection.clone()));
            let (port, ring) = output_ring(&name, self.pipeline.output_ring, Delivery::Newest);
            let (latency, histogram) = Latency::new();
            self.status
                .outputs
                .push((name, ring.stats.clone(), Some(histogram)));
            // Every performer's source too: receivers draw it beside the pose.
            let port = port.with_sources(Arc::new(1.into()));
            self.output_ports.push(port);
            let task = NatsOutput {
                client,
                prefix: out.prefix.clone(),
                bridge: bridge_name.to_owned(),
                ring,
                received: received_from
                    .iter()
                    .filter(|(server, _)| *server == out.server)
                    .map(|(_, received)| received.clone())
                    .collect(),
                skeletons: skeletons.clone(),
                latency,
                connection,
            };
            self.outputs.spawn(task.run());
        }
        Ok(())
    }
}
