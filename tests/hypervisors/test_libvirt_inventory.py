"""The libvirt inventory source against libvirt's own test driver: a site of several hosts.

`test:///default` is libvirt's in-process mock hypervisor (16 CPUs, one running domain);
`test:///<file>` is the same driver reading a host described in XML, here with one of
virtflow's domains beside a foreign one. The real libvirtd is read in tests/libvirt.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from temporalio.exceptions import ApplicationError

from hypervisors.inventory import inventory_source
from hypervisors.libvirt.inventory import LibvirtInventory
from placement.models import Host

HOST_XML = """<node>
  <cpu><nodes>1</nodes><sockets>1</sockets><cores>32</cores><threads>2</threads>
    <active>64</active><mhz>2000</mhz><model>x86_64</model></cpu>
  <memory>67108864</memory>
  <domain type='test'>
    <name>spare-c-r1</name>
    <metadata><virtflow:vm xmlns:virtflow='https://virtflow.dev/xmlns/vm/1'>
      <virtflow:vmid>301</virtflow:vmid><virtflow:group>web</virtflow:group></virtflow:vm>
    </metadata>
    <memory unit='MiB'>4096</memory><vcpu>4</vcpu><os><type>hvm</type></os>
  </domain>
  <domain type='test'>
    <name>someone-elses</name>
    <memory unit='MiB'>2048</memory><vcpu>2</vcpu><os><type>hvm</type></os>
  </domain>
</node>
"""


@pytest.fixture
def libvirt_python() -> None:
    try:
        import libvirt
    except ImportError:
        libvirt = None
    if libvirt is None or not hasattr(libvirt, "open"):
        pytest.skip("libvirt-python is not installed: `make libvirt` installs it")


def write_site(tmp_path: Path, doc: object) -> Path:
    site = tmp_path / "site.yaml"
    site.write_text(yaml.safe_dump(doc))
    return site


@pytest.mark.usefixtures("libvirt_python")
async def test_a_site_of_three_hosts_is_read_from_libvirt_and_the_site_file(
    tmp_path: Path,
) -> None:
    (tmp_path / "kvm-03.xml").write_text(HOST_XML)
    site = write_site(
        tmp_path,
        {
            "uri_template": "test:///default",
            "hosts": [
                {
                    "name": "kvm-01",
                    "pool": "general",
                    "rack": "r1",
                    "cpu_allocation_ratio": 4.0,
                    "disk_allocation_ratio": 2.0,
                },
                {
                    "name": "kvm-02",
                    "pool": "gpu",
                    "rack": "r2",
                    "labels": {"topology.kubernetes.io/zone": "b"},
                    "taints": [{"key": "gpu", "value": "true", "effect": "NoSchedule"}],
                    "vm_quota": 3,
                },
                {"name": "kvm-03", "uri": f"test://{tmp_path}/kvm-03.xml", "pool": "general"},
            ],
        },
    )
    snapshot = await inventory_source(f"libvirt:{site}").load()

    hosts = {h["name"]: Host.model_validate(h) for h in snapshot["hosts"]}
    assert list(hosts) == ["kvm-01", "kvm-02", "kvm-03"]
    # test:///default: 16 CPUs, 3 GiB, its one running domain "test" has 2 vCPUs and 8 GiB.
    assert (hosts["kvm-01"].cpu_capacity, hosts["kvm-01"].cpu_allocated) == (16, 2)
    assert (hosts["kvm-01"].memory_mb_capacity, hosts["kvm-01"].memory_mb_allocated) == (
        3072,
        8192,
    )
    assert hosts["kvm-01"].cpu_allocation_ratio == 4.0
    assert (hosts["kvm-01"].pool, hosts["kvm-01"].rack, hosts["kvm-01"].vm_count) == (
        "general",
        "r1",
        1,
    )
    assert hosts["kvm-02"].labels == {"topology.kubernetes.io/zone": "b"}
    assert [t.key for t in hosts["kvm-02"].taints] == ["gpu"]
    assert hosts["kvm-02"].vm_quota == 3
    # test:///default has one storage pool of 100 GiB, empty; thin storage may overcommit.
    assert (hosts["kvm-01"].disk_gb_capacity, hosts["kvm-01"].disk_gb_allocated) == (100, 0)
    assert (hosts["kvm-01"].disk_allocation_ratio, hosts["kvm-02"].disk_allocation_ratio) == (
        2.0,
        1.0,
    )
    # The XML host: both domains count against capacity, only one is virtflow's.
    assert (hosts["kvm-03"].cpu_capacity, hosts["kvm-03"].cpu_allocated) == (64, 6)
    assert (hosts["kvm-03"].memory_mb_capacity, hosts["kvm-03"].memory_mb_allocated) == (
        65536,
        6144,
    )
    assert snapshot["existing_vms"] == [{"name": "spare-c-r1", "host": "kvm-03", "group": "web"}]
    assert snapshot["used_vmids"] == [301]


# A host with two storage pools: VM disks (30 GiB and 1 MiB written of 100 GiB) and ISOs (2 of
# 100 GiB). The test driver gives each pool 100 GiB and sums its volumes' allocation.
POOLS_XML = """<node>
  <cpu><nodes>1</nodes><sockets>1</sockets><cores>8</cores><threads>1</threads>
    <active>8</active><mhz>2000</mhz><model>x86_64</model></cpu>
  <memory>16777216</memory>
  <pool type='dir'><name>vmdisks</name><target><path>/srv/vmdisks</path></target>
    <volume type='file'><name>a.qcow2</name><capacity unit='GiB'>40</capacity>
      <allocation unit='MiB'>30721</allocation><target><path>/srv/vmdisks/a.qcow2</path></target>
    </volume>
  </pool>
  <pool type='dir'><name>isos</name><target><path>/srv/isos</path></target>
    <volume type='file'><name>b.iso</name><capacity unit='GiB'>2</capacity>
      <allocation unit='GiB'>2</allocation><target><path>/srv/isos/b.iso</path></target></volume>
  </pool>
</node>
"""


@pytest.mark.usefixtures("libvirt_python")
@pytest.mark.parametrize(
    ("site_pools", "host_pools", "capacity", "allocated"),
    [
        # Every active pool: 200 GiB, 32 GiB and 1 MiB held, rounded up.
        (None, None, 200, 33),
        # The site names the pool of VM disks: the ISOs do not count.
        (["vmdisks"], None, 100, 31),
        # A host's own list wins; a pool it names that is not there holds nothing.
        (["vmdisks"], ["isos", "gone"], 100, 2),
        (None, ["gone"], 0, 0),
    ],
)
async def test_disk_comes_from_the_chosen_storage_pools(
    tmp_path: Path,
    site_pools: list[str] | None,
    host_pools: list[str] | None,
    capacity: int,
    allocated: int,
) -> None:
    (tmp_path / "kvm.xml").write_text(POOLS_XML)
    host: dict[str, object] = {"name": "kvm", "uri": f"test://{tmp_path}/kvm.xml"}
    if host_pools is not None:
        host["disk_pools"] = host_pools
    doc: dict[str, object] = {"hosts": [host]}
    if site_pools is not None:
        doc["disk_pools"] = site_pools
    snapshot = await LibvirtInventory(write_site(tmp_path, doc)).load()

    (placed,) = [Host.model_validate(h) for h in snapshot["hosts"]]
    assert (placed.disk_gb_capacity, placed.disk_gb_allocated) == (capacity, allocated)


@pytest.mark.usefixtures("libvirt_python")
async def test_a_host_that_does_not_answer_is_transient(tmp_path: Path) -> None:
    site = write_site(tmp_path, {"hosts": [{"name": "gone", "uri": f"test://{tmp_path}/no.xml"}]})
    with pytest.raises(ApplicationError) as raised:
        await LibvirtInventory(site).load()
    assert raised.value.type == "InventoryUnavailable"
    assert not raised.value.non_retryable
    assert "host gone" in str(raised.value)


@pytest.mark.parametrize(
    ("doc", "why"),
    [
        ({"hosts": []}, "at least 1 item"),
        ({"hosts": [{"name": "a", "cpu_capacity": 4}]}, "cpu_capacity"),
        ("just text", "valid dictionary"),
    ],
)
async def test_a_broken_site_file_fails_at_once_and_says_where(
    tmp_path: Path, doc: object, why: str
) -> None:
    site = write_site(tmp_path, doc)
    with pytest.raises(ApplicationError) as raised:
        await LibvirtInventory(site).load()
    assert raised.value.type == "InventoryInvalid"
    assert raised.value.non_retryable
    assert str(site) in str(raised.value)
    assert why in str(raised.value)
